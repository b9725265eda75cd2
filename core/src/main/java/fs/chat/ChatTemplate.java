package fs.chat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.json.JsonMessages;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Qwen3's chat template, its Jinja rules written out in Java so the prompt is byte-identical to what transformers
 * renders. Only that exact template is accepted (recognised by its SHA-256): rendering another model's template by
 * these rules would silently give the wrong prompt.
 */
public final class ChatTemplate {
    /** SHA-256 of the chat_template string of Qwen/Qwen3-0.6B (and the other Qwen3 hybrid-thinking models). */
    static final String QWEN3_SHA256 = "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5";
    private static final long MAX_TEMPLATE_BYTES = 1 << 20;

    private final String jinja;

    private ChatTemplate(String jinja) {
        this.jinja = jinja;
    }

    /**
     * Reads the template from {@code modelDir/tokenizer_config.json} ("chat_template"), or from
     * {@code modelDir/chat_template.jinja} where newer checkpoints keep it.
     */
    public static ChatTemplate load(Path modelDir) {
        Path config = modelDir.resolve("tokenizer_config.json");
        Path jinja = modelDir.resolve("chat_template.jinja");
        String template = Files.isRegularFile(config) ? templateInConfig(config) : null;
        Path source = config;
        if (template == null && Files.isRegularFile(jinja)) {
            template = read(jinja);
            source = jinja;
        }
        if (template == null) {
            throw new FsException("no chat template in " + modelDir + " (neither tokenizer_config.json \"chat_template\" nor chat_template.jinja)");
        }
        return of(template, source.toString());
    }

    /** The template that {@code template} spells, read from {@code source} (named in the error when it is not Qwen3's). */
    public static ChatTemplate of(String template, String source) {
        String sha256 = sha256(template);
        if (!sha256.equals(QWEN3_SHA256)) {
            throw new FsException("unsupported chat template in " + source + " (sha256 " + sha256
                    + "); only Qwen3's template is implemented");
        }
        return new ChatTemplate(template);
    }

    /** The template's Jinja text, as the model ships it (what llama-server's /props shows as chat_template). */
    public String jinja() {
        return jinja;
    }

    public String render(List<ChatMessage> messages, boolean addGenerationPrompt, Boolean enableThinking) {
        return render(messages, List.of(), addGenerationPrompt, enableThinking);
    }

    /**
     * The prompt for a conversation.
     *
     * @param tools function definitions offered to the model, as JSON objects (empty for none)
     * @param enableThinking null when not given; only {@code false} changes the output (an empty think block after
     *     the generation prompt)
     */
    public String render(List<ChatMessage> messages, List<JsonNode> tools, boolean addGenerationPrompt, Boolean enableThinking) {
        if (messages.isEmpty()) throw new FsException("a chat needs at least one message");
        StringBuilder out = new StringBuilder();
        ChatMessage first = messages.getFirst();
        if (!tools.isEmpty()) {
            out.append("<|im_start|>system\n");
            if (first.role().equals("system")) out.append(first.content()).append("\n\n");
            out.append("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                    + "You are provided with function signatures within <tools></tools> XML tags:\n<tools>");
            for (JsonNode tool : tools) out.append('\n').append(PythonJson.dumps(tool));
            out.append("\n</tools>\n\nFor each function call, return a json object with function name and arguments "
                    + "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
                    + "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n");
        } else if (first.role().equals("system")) {
            out.append("<|im_start|>system\n").append(first.content()).append("<|im_end|>\n");
        }

        int lastQuery = lastQueryIndex(messages);
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage message = messages.get(i);
            String role = message.role();
            boolean last = i == messages.size() - 1;
            if (role.equals("user") || (role.equals("system") && i > 0)) {
                out.append("<|im_start|>").append(role).append('\n').append(message.content()).append("<|im_end|>\n");
            } else if (role.equals("assistant")) {
                appendAssistant(message, i > lastQuery, last, out);
            } else if (role.equals("tool")) {
                if (i == 0 || !messages.get(i - 1).role().equals("tool")) out.append("<|im_start|>user");
                out.append("\n<tool_response>\n").append(message.content()).append("\n</tool_response>");
                if (last || !messages.get(i + 1).role().equals("tool")) out.append("<|im_end|>\n");
            }
        }
        if (addGenerationPrompt) {
            out.append("<|im_start|>assistant\n");
            if (Boolean.FALSE.equals(enableThinking)) out.append("<think>\n\n</think>\n\n");
        }
        return out.toString();
    }

    /**
     * The index of the last real user query: the last user message that is not a wrapped tool response. Thinking is
     * only shown for assistant turns after it; default the last index, as the template's namespace does.
     */
    private static int lastQueryIndex(List<ChatMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            ChatMessage message = messages.get(i);
            String content = message.content();
            boolean toolResponse = content.startsWith("<tool_response>") && content.endsWith("</tool_response>");
            if (message.role().equals("user") && !toolResponse) return i;
        }
        return messages.size() - 1;
    }

    private static void appendAssistant(ChatMessage message, boolean afterLastQuery, boolean last, StringBuilder out) {
        String content = message.content();
        String reasoning = "";
        if (message.reasoningContent() != null) {
            reasoning = message.reasoningContent();
        } else if (content.contains("</think>")) {
            String beforeFirstEnd = content.substring(0, content.indexOf("</think>"));
            content = stripLeadingNewlines(content.substring(content.lastIndexOf("</think>") + "</think>".length()));
            String stripped = stripTrailingNewlines(beforeFirstEnd);
            int think = stripped.lastIndexOf("<think>");
            reasoning = stripLeadingNewlines(think < 0 ? stripped : stripped.substring(think + "<think>".length()));
        }
        out.append("<|im_start|>assistant\n");
        if (afterLastQuery && (last || !reasoning.isEmpty())) {
            out.append("<think>\n").append(stripTrailingNewlines(stripLeadingNewlines(reasoning))).append("\n</think>\n\n")
                    .append(stripLeadingNewlines(content));
        } else {
            out.append(content);
        }
        List<ToolCall> calls = message.toolCalls();
        for (int k = 0; k < calls.size(); k++) {
            if (k > 0 || !content.isEmpty()) out.append('\n');
            ToolCall call = calls.get(k);
            JsonNode arguments = call.arguments();
            out.append("<tool_call>\n{\"name\": \"").append(call.name()).append("\", \"arguments\": ")
                    .append(arguments != null && arguments.isTextual() ? arguments.textValue() : PythonJson.dumps(arguments))
                    .append("}\n</tool_call>");
        }
        out.append("<|im_end|>\n");
    }

    private static String stripLeadingNewlines(String s) {
        int start = 0;
        while (start < s.length() && s.charAt(start) == '\n') start++;
        return s.substring(start);
    }

    private static String stripTrailingNewlines(String s) {
        int end = s.length();
        while (end > 0 && s.charAt(end - 1) == '\n') end--;
        return s.substring(0, end);
    }

    /** The "chat_template" string of a tokenizer_config.json, or the "default" one of a list of named templates. */
    private static String templateInConfig(Path config) {
        try (JsonParser p = new JsonFactory().createParser(config.toFile())) {
            if (p.nextToken() != JsonToken.START_OBJECT) throw new FsException(config + " is not a JSON object");
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (!name.equals("chat_template")) {
                    p.skipChildren();
                } else if (value == JsonToken.VALUE_STRING) {
                    return p.getText();
                } else if (value == JsonToken.START_ARRAY) {
                    return defaultOfNamedTemplates(p, config);
                } else if (value != JsonToken.VALUE_NULL) {
                    throw new FsException(config + ": chat_template is neither a string nor a list of named templates");
                }
            }
            return null;
        } catch (JsonProcessingException e) {
            throw new FsException(config + ": " + JsonMessages.describe(e));
        } catch (IOException e) {
            throw new FsException("cannot read " + config + ": " + e.getMessage());
        }
    }

    private static String defaultOfNamedTemplates(JsonParser p, Path config) throws IOException {
        String found = null;
        for (JsonToken entry; (entry = p.nextToken()) != JsonToken.END_ARRAY; ) {
            if (entry != JsonToken.START_OBJECT) {
                throw new FsException(config + ": chat_template lists " + JsonMessages.words(entry)
                        + " where a named template {\"name\": ..., \"template\": ...} belongs");
            }
            String name = null;
            String template = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                boolean text = p.nextToken() == JsonToken.VALUE_STRING;
                if (text && field.equals("name")) name = p.getText();
                else if (text && field.equals("template")) template = p.getText();
                else p.skipChildren();
            }
            if ("default".equals(name)) found = template;
        }
        if (found == null) throw new FsException(config + ": chat_template lists no template named \"default\"");
        return found;
    }

    private static String read(Path file) {
        try {
            // Qwen3's template is 4 KB; a file of gigabytes would be read whole before its hash could refuse it.
            long size = Files.size(file);
            if (size > MAX_TEMPLATE_BYTES) {
                throw new FsException(file + ": " + size + " bytes, more than any chat template needs (the limit is "
                        + MAX_TEMPLATE_BYTES + ")");
            }
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new FsException("cannot read " + file + ": " + e.getMessage());
        }
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
