package fs.server;

import static fs.server.CompletionRequest.kind;
import static fs.server.CompletionRequest.quoted;

import com.fasterxml.jackson.databind.JsonNode;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import fs.json.JsonFields;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The body of an Anthropic Messages request ({@code POST /v1/messages}, {@code POST /v1/messages/count_tokens}) read
 * into the server's one {@link CompletionRequest}: {@code system} and {@code messages} (content as a string or blocks:
 * text, tool_use, tool_result, thinking) become chat messages, {@code tools} and {@code tool_choice} the
 * {@link ChatTools}, {@code thinking} the template's enable_thinking. Blocks the model cannot read (images, documents)
 * and server tools are refused with a 400 that names them; fields it does not use ({@code metadata},
 * {@code cache_control}, a thinking budget) are accepted and ignored.
 */
final class AnthropicRequest {
    private AnthropicRequest() {}

    /** Reads a message request: {@code max_tokens} is required. */
    static CompletionRequest message(JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        if (!fields.has("max_tokens")) throw ApiException.invalid("max_tokens", "'max_tokens' is required");
        int maxTokens = fields.intOrNull("max_tokens");
        if (maxTokens < 1) {
            throw ApiException.invalid("max_tokens", "'max_tokens' must be at least 1, got " + maxTokens);
        }
        if (fields.has("metadata")) fields.object("metadata"); // an object if given; nothing in it is used
        CompletionRequest.Sampling sampling = new CompletionRequest.Sampling(
                CompletionRequest.number(fields, "temperature"), fields.intOrNull("top_k"),
                CompletionRequest.number(fields, "top_p"), null, null, null, null, null);
        return new CompletionRequest(fields.textOrNull("model"), prompt(fields), fields.bool("stream", false), false,
                maxTokens, sampling, -1, CompletionRequest.stopStrings("stop_sequences", body.get("stop_sequences")),
                tools(fields), new OutputFormat.Text());
    }

    /** Reads a count_tokens request: a message request's prompt and tools, without {@code max_tokens}. */
    static CompletionRequest countTokens(JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        return new CompletionRequest(fields.textOrNull("model"), prompt(fields), false, false, -1,
                new CompletionRequest.Sampling(null, null, null, null, null, null, null, null), -1, List.of(),
                tools(fields), new OutputFormat.Text());
    }

    private static CompletionRequest.Prompt.Chat prompt(JsonFields body) {
        List<ChatMessage> messages = new ArrayList<>();
        if (body.has("system")) messages.add(ChatMessage.system(text(body, "system")));
        if (!body.has("messages")) throw ApiException.invalid("messages", "'messages' is required");
        int count = body.array("messages").size();
        if (count == 0) throw ApiException.invalid("messages", "'messages' must hold at least one message");
        for (int i = 0; i < count; i++) {
            JsonFields message = body.element("messages", i);
            String role = message.textOrNull("role");
            if (role == null) throw ApiException.invalid(message.name("role"), "'" + message.name("role")
                    + "' is required");
            if (!role.equals("user") && !role.equals("assistant")) {
                throw ApiException.invalid(message.name("role"), "role " + quoted(role) + " is not a role of the "
                        + "Messages API (user or assistant; the system prompt is the top-level 'system')");
            }
            if (!message.has("content")) {
                throw ApiException.invalid(message.name("content"), "'" + message.name("content") + "' is required");
            }
            JsonNode content = message.get("content");
            if (content.isTextual()) {
                messages.add(new ChatMessage(role, content.textValue()));
            } else if (!content.isArray()) {
                throw ApiException.wrongType(message.name("content"), "a string or an array of content blocks",
                        kind(content));
            } else if (role.equals("user")) {
                userTurn(message, messages);
            } else {
                messages.add(assistantTurn(message));
            }
        }
        return new CompletionRequest.Prompt.Chat(messages, enableThinking(body));
    }

    /**
     * A user turn's blocks: its text, and each tool result as a tool message (the shape the chat template renders a
     * result in), in their order.
     */
    private static void userTurn(JsonFields message, List<ChatMessage> messages) {
        StringBuilder text = new StringBuilder();
        int count = message.array("content").size();
        boolean results = false; // whether the turn held tool results
        for (int j = 0; j < count; j++) {
            JsonFields block = message.element("content", j);
            switch (blockType(block)) {
                case "text" -> text.append(block.text("text"));
                case "tool_result" -> {
                    if (!text.isEmpty()) {
                        messages.add(ChatMessage.user(text.toString()));
                        text.setLength(0);
                    }
                    block.text("tool_use_id"); // required; the template does not show it
                    String result = block.has("content") ? text(block, "content") : "";
                    // The template has no place for it: the model reads that the call failed from the result.
                    boolean error = block.bool("is_error", false);
                    messages.add(ChatMessage.tool(error ? "Error: " + result : result));
                    results = true;
                }
                default -> throw unsupportedBlock(block, "user", "text or tool_result");
            }
        }
        if (!text.isEmpty() || !results) messages.add(ChatMessage.user(text.toString()));
    }

    /** An assistant turn's blocks: its text, its thinking (kept apart from the text) and its tool calls. */
    private static ChatMessage assistantTurn(JsonFields message) {
        StringBuilder text = new StringBuilder();
        StringBuilder thinking = new StringBuilder();
        List<ToolCall> calls = new ArrayList<>();
        int count = message.array("content").size();
        for (int j = 0; j < count; j++) {
            JsonFields block = message.element("content", j);
            switch (blockType(block)) {
                case "text" -> text.append(block.text("text"));
                case "thinking" -> thinking.append(block.text("thinking")); // its signature is not checked
                case "tool_use" -> {
                    block.text("id"); // required; the template does not show it
                    JsonNode input = block.required("input");
                    if (!input.isObject()) throw block.mistyped("input", "an object", input);
                    calls.add(new ToolCall(block.text("name"), input));
                }
                default -> throw unsupportedBlock(block, "assistant", "text, thinking or tool_use");
            }
        }
        return new ChatMessage("assistant", text.toString(), thinking.isEmpty() ? null : thinking.toString(), calls);
    }

    private static String blockType(JsonFields block) {
        String type = block.textOrNull("type");
        if (type == null) throw ApiException.invalid(block.name("type"), "'" + block.name("type") + "' is required");
        return type;
    }

    private static ApiException unsupportedBlock(JsonFields block, String role, String supported) {
        return ApiException.unsupported(block.name("type"), "content blocks of type " + quoted(block.text("type"))
                + " are not supported by this server in " + role + " turns (" + supported + ": the model reads text "
                + "only)");
    }

    /** A field that is a string or an array of text blocks (joined), as system and a tool result's content are. */
    private static String text(JsonFields fields, String field) {
        JsonNode value = fields.get(field);
        if (value.isTextual()) return value.textValue();
        if (!value.isArray()) throw fields.mistyped(field, "a string or an array of text blocks", value);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < value.size(); i++) {
            JsonFields block = fields.element(field, i);
            if (!blockType(block).equals("text")) {
                throw ApiException.unsupported(block.name("type"), "content blocks of type "
                        + quoted(block.text("type")) + " are not supported by this server in '" + fields.name(field)
                        + "' (only text: the model reads text only)");
            }
            text.append(block.text("text"));
        }
        return text.toString();
    }

    /** {@code thinking}: enabled or disabled turns the template's thinking on or off; absent, its default. */
    private static Boolean enableThinking(JsonFields body) {
        if (!body.has("thinking")) return null;
        JsonFields thinking = body.object("thinking");
        String type = thinking.textOrNull("type");
        if ("enabled".equals(type)) {
            thinking.intOrNull("budget_tokens"); // an integer if given; the answer's limit is max_tokens
            return true;
        }
        if ("disabled".equals(type)) return false;
        throw ApiException.invalid(thinking.name("type"), "'" + thinking.name("type") + "' must be \"enabled\" or "
                + "\"disabled\", got " + quoted(type));
    }

    /** {@code tools} (custom tools: name, description, input_schema) under {@code tool_choice}. */
    private static ChatTools tools(JsonFields body) {
        List<ChatTools.Function> functions = new ArrayList<>();
        if (body.has("tools")) {
            Set<String> names = new HashSet<>();
            int count = body.array("tools").size();
            for (int i = 0; i < count; i++) {
                JsonFields tool = body.element("tools", i);
                String at = "tools[" + i + "]";
                String type = tool.textOrNull("type");
                if (type != null && !type.equals("custom")) {
                    throw ApiException.unsupported(at + ".type", "tools of type " + quoted(type) + " (Anthropic's "
                            + "server tools) are not supported by this server: only custom tools, with a name and an "
                            + "input_schema");
                }
                JsonNode schema = tool.get("input_schema");
                if (schema == null || schema.isNull()) {
                    throw ApiException.invalid(at + ".input_schema", "'" + at + ".input_schema' is required");
                }
                if (!schema.isObject()) {
                    throw ApiException.wrongType(at + ".input_schema", "an object (a JSON schema)", kind(schema));
                }
                functions.add(ChatTools.function(at, tool.textOrNull("name"), tool.textOrNull("description"), schema,
                        "input_schema", names));
            }
        }
        if (!body.has("tool_choice")) {
            return functions.isEmpty() ? ChatTools.NONE
                    : new ChatTools(functions, new ChatTools.Choice.Auto(), true);
        }
        JsonFields choice = body.object("tool_choice");
        String type = choice.textOrNull("type");
        boolean parallel = !choice.bool("disable_parallel_tool_use", false);
        ChatTools.Choice chosen = switch (type == null ? "" : type) {
            case "auto" -> new ChatTools.Choice.Auto();
            case "any" -> new ChatTools.Choice.Required();
            case "none" -> new ChatTools.Choice.None();
            case "tool" -> {
                String name = choice.text("name");
                if (functions.stream().noneMatch(f -> f.name().equals(name))) {
                    throw ApiException.invalid("tool_choice.name", "'tool_choice' names the tool " + quoted(name)
                            + ", which is not among the tools");
                }
                yield new ChatTools.Choice.Named(name);
            }
            default -> throw ApiException.invalid("tool_choice.type", "'tool_choice.type' must be \"auto\", \"any\", "
                    + "\"tool\" or \"none\", got " + quoted(type));
        };
        if (functions.isEmpty()) {
            if (chosen instanceof ChatTools.Choice.None) return ChatTools.NONE;
            throw ApiException.invalid("tool_choice", "'tool_choice' needs 'tools' to choose from");
        }
        return new ChatTools(functions, chosen, parallel);
    }
}
