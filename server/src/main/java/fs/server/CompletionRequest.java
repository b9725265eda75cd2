package fs.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import fs.generate.SamplingParams;
import fs.generate.TokenLogprobs;
import fs.json.JsonFields;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The body of a {@code /v1/chat/completions} or {@code /v1/completions} request, read and checked: every field this
 * server uses, with the wrong type or an impossible value refused (400, naming the field), and every field OpenAI
 * defines but this server cannot honour refused when given a value that would need it (n &gt; 1, the deprecated
 * functions, and for text completions echo, suffix and best_of &gt; 1). Fields it does not know are ignored, as
 * llama-server ignores them.
 *
 * @param model        the model the client named; null when it named none
 * @param prompt       the messages (chat) or the text or token ids (completions)
 * @param stream       answer as server-sent events
 * @param includeUsage streamed: end with a chunk that carries the usage
 * @param maxTokens    tokens to generate at most; -1: until the model stops or the context is full
 * @param topLogprobs  -1: no logprobs; else each token's logprob is reported with this many alternatives (0..20)
 * @param stop         strings that end the answer (not part of it)
 * @param tools        the functions a chat offers the model ({@link ChatTools#NONE} for a text completion)
 * @param format       the shape the answer must have
 */
record CompletionRequest(
        String model,
        Prompt prompt,
        boolean stream,
        boolean includeUsage,
        int maxTokens,
        Sampling sampling,
        int topLogprobs,
        List<String> stop,
        ChatTools tools,
        OutputFormat format) {

    /** The most stop strings a request may give (OpenAI allows 4; llama-server any number). */
    static final int MAX_STOP_STRINGS = 16;

    /**
     * The most alternatives per token: OpenAI's top_logprobs limit for chat. For text completions OpenAI allows
     * logprobs up to 5; this server, like llama-server, allows more (the same 20).
     */
    static final int MAX_TOP_LOGPROBS = TokenLogprobs.MAX_TOP;

    /** What the model continues. */
    sealed interface Prompt {
        /** Chat messages, rendered through the chat template; {@code enableThinking} null: the template's default. */
        record Chat(List<ChatMessage> messages, Boolean enableThinking) implements Prompt {}

        /** A text, tokenized as is. */
        record Text(String text) implements Prompt {}

        /** Token ids, as is. */
        record Tokens(int[] ids) implements Prompt {}
    }

    /** The sampling fields the request gave (null: the server's default, see {@link ServedModel#defaults}). */
    record Sampling(Float temperature, Integer topK, Float topP, Float minP, Float repeatPenalty,
                    Float presencePenalty, Float frequencyPenalty, Long seed) {
        /** {@code defaults} with the request's values; a value no sampler takes is a 400 naming it. */
        SamplingParams over(SamplingParams defaults) {
            try {
                return defaults.withOverrides(temperature, topK, topP, minP, repeatPenalty, presencePenalty,
                        frequencyPenalty, seed);
            } catch (FsException e) {
                throw ApiException.invalid(refusedField(e.getMessage()), e.getMessage());
            }
        }

        /** The request field a sampler's refusal names (its message starts with the setting's name), or null. */
        private static String refusedField(String message) {
            for (Map.Entry<String, String> setting : SAMPLER_FIELDS.entrySet()) {
                if (message.startsWith(setting.getKey())) return setting.getValue();
            }
            return null;
        }
    }

    /** The sampler's name of each setting (SamplingParams' messages), and the request field that sets it. */
    private static final Map<String, String> SAMPLER_FIELDS = Map.of("temperature", "temperature", "top-k", "top_k",
            "top-p", "top_p", "min-p", "min_p", "repeat penalty", "repetition_penalty",
            "presence penalty", "presence_penalty", "frequency penalty", "frequency_penalty");

    private static final Map<String, String> CHAT_ROLES = Map.of("system", "system", "developer", "system",
            "user", "user", "assistant", "assistant", "tool", "tool");

    /** A request's problems with its fields as OpenAI-shaped 400s that name the field. */
    static final JsonFields.FieldErrors API_ERRORS = new JsonFields.FieldErrors() {
        @Override
        public RuntimeException invalid(String field, String line) {
            return ApiException.invalid(field, line);
        }

        @Override
        public RuntimeException mistyped(String field, String expected, JsonNode found) {
            return ApiException.wrongType(field, expected, kind(found));
        }
    };

    /** Reads a chat completion request. */
    static CompletionRequest chat(JsonNode body) {
        JsonFields fields = JsonFields.of(body, API_ERRORS);
        Prompt prompt = new Prompt.Chat(messages(fields), enableThinking(fields));
        Boolean logprobs = fields.boolOrNull("logprobs");
        Integer top = fields.intOrNull("top_logprobs");
        if (top != null && !Boolean.TRUE.equals(logprobs)) {
            throw ApiException.invalid("top_logprobs", "'top_logprobs' needs 'logprobs': true");
        }
        int topLogprobs = Boolean.TRUE.equals(logprobs) ? topLogprobs("top_logprobs", top != null ? top : 0) : -1;
        ChatTools tools = ChatTools.read(body);
        OutputFormat format = OutputFormat.read(body);
        if (tools.offered() && !(format instanceof OutputFormat.Text)) {
            // Both would constrain the same answer: a tool call is JSON of its own shape.
            throw ApiException.unsupported("tools", "'tools' cannot be combined with a constraint on the answer "
                    + "(response_format, grammar or json_schema) by this server");
        }
        Integer maxCompletion = fields.intOrNull("max_completion_tokens");
        int maxTokens = maxCompletion != null ? positive("max_completion_tokens", maxCompletion) : maxTokens(fields);
        return common(fields, prompt, maxTokens, topLogprobs, tools, format);
    }

    /** Reads a (legacy) text completion request. */
    static CompletionRequest completion(JsonNode body) {
        JsonFields fields = JsonFields.of(body, API_ERRORS);
        Prompt prompt = textPrompt(body);
        Integer logprobs = fields.intOrNull("logprobs"); // here the number of alternatives, not a boolean
        int topLogprobs = logprobs != null ? topLogprobs("logprobs", logprobs) : -1;
        Boolean echo = fields.boolOrNull("echo");
        if (echo != null && echo) throw ApiException.unsupported("echo", "echo is not supported by this server");
        JsonNode suffix = body.get("suffix");
        if (suffix != null && !suffix.isNull()) {
            throw ApiException.unsupported("suffix", "suffix (insertion) is not supported by this server");
        }
        Integer bestOf = fields.intOrNull("best_of");
        if (bestOf != null && bestOf != 1) {
            throw ApiException.unsupported("best_of", "best_of must be 1: this server returns one completion");
        }
        for (String field : List.of("tools", "tool_choice")) {
            JsonNode node = body.get(field);
            if (node != null && !node.isNull()) {
                throw ApiException.unsupported(field, "'" + field + "' belongs to chat completions "
                        + "(/v1/chat/completions), not to text completions");
            }
        }
        return common(fields, prompt, maxTokens(fields), topLogprobs, ChatTools.NONE, OutputFormat.read(body));
    }

    private static CompletionRequest common(JsonFields body, Prompt prompt, int maxTokens, int topLogprobs,
            ChatTools tools, OutputFormat format) {
        String model = body.textOrNull("model");
        Integer n = body.intOrNull("n");
        if (n != null && n != 1) throw ApiException.unsupported("n", "n must be 1: this server returns one choice");
        Float presence = additivePenalty(body, "presence_penalty");
        Float frequency = additivePenalty(body, "frequency_penalty");
        Float repetition = number(body, "repetition_penalty");
        Float repeat = number(body, "repeat_penalty"); // llama-server's name for it
        if (repetition != null && repeat != null && !repetition.equals(repeat)) {
            throw ApiException.invalid("repeat_penalty", "repetition_penalty and repeat_penalty are the same setting "
                    + "and were given different values");
        }
        Integer topK = body.intOrNull("top_k");
        Sampling sampling = new Sampling(number(body, "temperature"), topK, number(body, "top_p"),
                number(body, "min_p"), repetition != null ? repetition : repeat, presence, frequency,
                body.longOrNull("seed"));

        boolean stream = body.bool("stream", false);
        boolean includeUsage = body.has("stream_options")
                && body.object("stream_options").bool("include_usage", false);
        return new CompletionRequest(model, prompt, stream, includeUsage, maxTokens, sampling,
                topLogprobs, stopStrings("stop", body.get("stop")), tools, format);
    }

    private static List<ChatMessage> messages(JsonFields body) {
        if (!body.has("messages")) throw ApiException.invalid("messages", "'messages' is required");
        int count = body.array("messages").size();
        if (count == 0) throw ApiException.invalid("messages", "'messages' must hold at least one message");
        List<ChatMessage> result = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            JsonFields message = body.element("messages", i);
            String given = message.textOrNull("role");
            if (given == null) {
                throw ApiException.invalid(message.name("role"), "'" + message.name("role") + "' is required");
            }
            String role = CHAT_ROLES.get(given);
            if (role == null) {
                throw ApiException.unsupported(message.name("role"), "role " + quoted(given) + " is not supported by this "
                        + "server (system, developer, user, assistant or tool)");
            }
            List<ToolCall> calls = role.equals("assistant") ? toolCalls(message) : List.of();
            String content = content(message, role);
            String reasoning = role.equals("assistant") ? message.textOrNull("reasoning_content") : null;
            if (role.equals("tool")) message.textOrNull("tool_call_id"); // a string if given
            result.add(new ChatMessage(role, content, reasoning, calls));
        }
        return result;
    }

    /** An assistant message's calls. */
    private static List<ToolCall> toolCalls(JsonFields message) {
        if (!message.has("tool_calls")) return List.of();
        List<ToolCall> result = new ArrayList<>();
        int count = message.array("tool_calls").size();
        for (int j = 0; j < count; j++) {
            JsonFields call = message.element("tool_calls", j);
            String callAt = message.name("tool_calls[" + j + "]");
            String type = call.textOrNull("type");
            if (type != null && !type.equals("function")) {
                throw ApiException.unsupported(callAt + ".type", "tool calls of type " + quoted(type)
                        + " are not supported by this server (only \"function\")");
            }
            call.textOrNull("id"); // a string if given; the template does not show it
            JsonNode functionNode = call.get("function");
            if (functionNode == null || !functionNode.isObject()) {
                throw ApiException.invalid(callAt + ".function", "'" + callAt + ".function' must be an object with "
                        + "the name and the arguments of the call");
            }
            JsonFields function = call.inner("function", functionNode);
            String name = function.textOrNull("name");
            if (name == null) {
                throw ApiException.invalid(callAt + ".function.name", "'" + callAt + ".function.name' is required");
            }
            String arguments = function.textOrNull("arguments");
            if (arguments == null) {
                throw ApiException.invalid(callAt + ".function.arguments",
                        "'" + callAt + ".function.arguments' is required");
            }
            result.add(toolCall(name, arguments, callAt + ".function.arguments"));
        }
        return List.copyOf(result);
    }

    /**
     * A call a client sends back: OpenAI's APIs send its arguments as a string holding JSON, which is read back into
     * JSON here so that the template writes it as the model wrote it; {@code param} names the arguments' field.
     */
    static ToolCall toolCall(String name, String arguments, String param) {
        JsonNode parsed;
        try {
            parsed = Exchange.WHOLE_JSON.readTree(arguments);
        } catch (JsonProcessingException e) {
            throw ApiException.invalid(param, "'" + param + "' is not JSON: " + e.getOriginalMessage());
        }
        if (parsed == null || parsed.isMissingNode()) {
            throw ApiException.invalid(param, "'" + param + "' is empty: send \"{}\" for no arguments");
        }
        return new ToolCall(name, parsed);
    }

    /** A message's content: a string, or an array of text parts (joined); null only for an assistant. */
    private static String content(JsonFields message, String role) {
        JsonNode content = message.get("content");
        String at = message.name("content");
        if (!message.has("content")) {
            if (role.equals("assistant")) return "";
            throw ApiException.invalid(at, "'" + at + "' is required");
        }
        if (content.isTextual()) return content.textValue();
        if (!content.isArray()) throw ApiException.wrongType(at, "a string or an array of parts", kind(content));
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < content.size(); i++) {
            JsonFields part = message.element("content", i);
            String partAt = at + "[" + i + "]";
            String type = part.textOrNull("type");
            if (!"text".equals(type)) {
                throw ApiException.unsupported(partAt + ".type", "content parts of type " + quoted(type)
                        + " are not supported by this server (only \"text\": the model reads text only)");
            }
            String partText = part.textOrNull("text");
            if (partText == null) throw ApiException.invalid(partAt + ".text", "'" + partAt + ".text' is required");
            text.append(partText);
        }
        return text.toString();
    }

    private static Boolean enableThinking(JsonFields body) {
        return body.has("chat_template_kwargs") ? body.object("chat_template_kwargs").boolOrNull("enable_thinking")
                : null;
    }

    private static Prompt textPrompt(JsonNode body) {
        JsonNode prompt = body.get("prompt");
        if (prompt == null || prompt.isNull()) throw ApiException.invalid("prompt", "'prompt' is required");
        if (prompt.isTextual()) return new Prompt.Text(prompt.textValue());
        if (!prompt.isArray()) {
            throw ApiException.wrongType("prompt", "a string, an array of one string or an array of token ids",
                    kind(prompt));
        }
        if (prompt.size() == 1 && prompt.get(0).isTextual()) return new Prompt.Text(prompt.get(0).textValue());
        int[] ids = new int[prompt.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode id = prompt.get(i);
            if (id.isTextual()) {
                throw ApiException.unsupported("prompt", "a batch of several prompts is not supported by this server: "
                        + "send one request per prompt");
            }
            if (!id.isIntegralNumber() || !id.canConvertToInt()) {
                throw ApiException.wrongType("prompt[" + i + "]", "a token id", kind(id));
            }
            ids[i] = id.intValue();
        }
        return new Prompt.Tokens(ids);
    }

    private static int maxTokens(JsonFields body) {
        Integer max = body.intOrNull("max_tokens");
        return max != null ? positive("max_tokens", max) : -1;
    }

    private static int positive(String field, int value) {
        if (value < 1) throw ApiException.invalid(field, "'" + field + "' must be at least 1, got " + value);
        return value;
    }

    /** The stop strings of the request's {@code field} (a string or an array of strings), the empty ones left out. */
    static List<String> stopStrings(String field, JsonNode stop) {
        if (stop == null || stop.isNull()) return List.of();
        List<String> strings = new ArrayList<>();
        if (stop.isTextual()) {
            strings.add(stop.textValue());
        } else if (stop.isArray()) {
            for (int i = 0; i < stop.size(); i++) {
                JsonNode one = stop.get(i);
                if (!one.isTextual()) throw ApiException.wrongType(field + "[" + i + "]", "a string", kind(one));
                strings.add(one.textValue());
            }
        } else {
            throw ApiException.wrongType(field, "a string or an array of strings", kind(stop));
        }
        if (strings.size() > MAX_STOP_STRINGS) {
            throw ApiException.invalid(field, "at most " + MAX_STOP_STRINGS + " stop strings, got " + strings.size());
        }
        strings.removeIf(String::isEmpty); // an empty string would stop before the first token
        return List.copyOf(strings);
    }

    /** OpenAI's presence or frequency penalty: a number in [-2, 2]; null when not given. */
    private static Float additivePenalty(JsonFields body, String field) {
        Float value = number(body, field);
        float max = SamplingParams.MAX_ADDITIVE_PENALTY;
        if (value != null && !(value >= -max && value <= max)) {
            throw ApiException.invalid(field, "'" + field + "' must be in [-2, 2], got " + body.get(field));
        }
        return value;
    }

    private static int topLogprobs(String field, int value) {
        if (value < 0 || value > MAX_TOP_LOGPROBS) {
            throw ApiException.invalid(field, "'" + field + "' must be in 0.." + MAX_TOP_LOGPROBS + ", got " + value);
        }
        return value;
    }

    /** The field's number rounded to a float (beyond a float's range: infinite, for the range checks to refuse). */
    static Float number(JsonFields body, String field) {
        Double value = body.numberOrNull(field);
        return value != null ? value.floatValue() : null;
    }

    /** What a JSON value is, in OpenAI's words ("a string", "an object"). */
    static String kind(JsonNode node) {
        return switch (node.getNodeType()) {
            case STRING -> "a string";
            case NUMBER -> node.isIntegralNumber() ? "an integer" : "a decimal";
            case BOOLEAN -> "a boolean";
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            case NULL -> "null";
            default -> "a value";
        };
    }

    static String quoted(String s) {
        return s == null ? "(none)" : fs.Quoted.quote(s);
    }
}
