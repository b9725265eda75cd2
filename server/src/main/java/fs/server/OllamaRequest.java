package fs.server;

import static fs.server.CompletionRequest.kind;
import static fs.server.CompletionRequest.quoted;

import com.fasterxml.jackson.databind.JsonNode;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import fs.json.JsonFields;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The body of an Ollama {@code POST /api/chat} or {@code POST /api/generate}, read and checked into the one
 * {@link CompletionRequest}: the messages (or the prompt, through the chat template unless {@code raw}), {@code tools},
 * {@code format} ("json" or a JSON schema), {@code think} (the template's enable_thinking), {@code stream} (true unless
 * false, as in Ollama) and the {@code options} that shape an answer (num_predict, temperature, top_k, top_p, min_p,
 * repeat_penalty, presence_penalty, frequency_penalty, seed, stop; num_ctx is checked against the server's context).
 * What this server cannot honour (images, a suffix, a template, the deprecated context) is refused with a 400 that
 * says so; {@code keep_alive} and the options about how Ollama runs a model are accepted and ignored: the model stays
 * loaded, as fs serve runs it.
 *
 * @param model      the model the client named, echoed in the answer
 * @param completion the request for the engine; null when there is nothing to answer (no messages, an empty prompt):
 *                   Ollama's way to load a model, which is loaded already
 */
record OllamaRequest(String model, CompletionRequest completion) {

    private static final Set<String> ROLES = Set.of("system", "user", "assistant", "tool");

    /** Whether it asks only that the model be loaded. */
    boolean loadOnly() {
        return completion == null;
    }

    /** Reads a {@code /api/chat} body; {@code context} is the server's, which num_ctx may not exceed. */
    static OllamaRequest chat(JsonNode body, int context) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        String model = model(fields);
        List<ChatMessage> messages = fields.has("messages") ? messages(fields) : List.of();
        ChatTools tools = ChatTools.read(body);
        OutputFormat format = format(body.get("format"));
        if (tools.offered() && !(format instanceof OutputFormat.Text)) {
            throw ApiException.unsupported("tools", "'tools' cannot be combined with 'format' by this server: a tool "
                    + "call is JSON of its own shape");
        }
        CompletionRequest.Prompt prompt = new CompletionRequest.Prompt.Chat(messages, think(fields));
        return new OllamaRequest(model, messages.isEmpty() ? null : completion(fields, prompt, tools, format, context));
    }

    /**
     * Reads a {@code /api/generate} body: the prompt (after the {@code system} message, if any) as a user turn of the
     * chat template, or with {@code raw} as it is.
     */
    static OllamaRequest generate(JsonNode body, int context) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        String model = model(fields);
        for (String unsupported : List.of("suffix", "template")) {
            String value = fields.textOrNull(unsupported);
            if (value != null && !value.isEmpty()) {
                throw ApiException.unsupported(unsupported, "'" + unsupported + "' is not supported by this server"
                        + (unsupported.equals("suffix") ? " (no fill-in-the-middle)" : ": it uses the model's own "
                        + "chat template (or none, with \"raw\": true)"));
            }
        }
        refuseNonEmpty(fields, "images", "'images' are not supported by this server: the model reads text only");
        refuseNonEmpty(fields, "context", "'context' (deprecated by Ollama) is not supported by this server: send "
                + "the conversation to /api/chat");
        String text = fields.textOrNull("prompt");
        String system = fields.textOrNull("system");
        OutputFormat format = format(body.get("format"));
        Boolean think = think(fields);
        if (text == null || text.isEmpty()) return new OllamaRequest(model, null);
        CompletionRequest.Prompt prompt;
        if (fields.bool("raw", false)) {
            prompt = new CompletionRequest.Prompt.Text(text);
        } else {
            List<ChatMessage> turn = new ArrayList<>();
            if (system != null && !system.isEmpty()) turn.add(ChatMessage.system(system));
            turn.add(ChatMessage.user(text));
            prompt = new CompletionRequest.Prompt.Chat(turn, think);
        }
        return new OllamaRequest(model, completion(fields, prompt, ChatTools.NONE, format, context));
    }

    /** The model a request names, which Ollama requires. */
    static String model(JsonFields fields) {
        String model = fields.textOrNull("model");
        if (model == null || model.isEmpty()) throw ApiException.invalid("model", "model is required");
        return model;
    }

    private static CompletionRequest completion(JsonFields fields, CompletionRequest.Prompt prompt, ChatTools tools,
                                                OutputFormat format, int context) {
        JsonFields options = fields.has("options") ? fields.object("options") : JsonFields.of(
                Exchange.JSON.createObjectNode(), CompletionRequest.API_ERRORS);
        Integer numCtx = options.intOrNull("num_ctx");
        if (numCtx != null && (numCtx < 1 || numCtx > context)) {
            throw ApiException.invalid("options.num_ctx", "'options.num_ctx' must be in 1.." + context + ", this "
                    + "server's context (fs serve --ctx), got " + numCtx);
        }
        CompletionRequest.Sampling sampling = new CompletionRequest.Sampling(number(options, "temperature"),
                options.intOrNull("top_k"), number(options, "top_p"), number(options, "min_p"),
                number(options, "repeat_penalty"), number(options, "presence_penalty"),
                number(options, "frequency_penalty"), options.longOrNull("seed"));
        return new CompletionRequest(null, prompt, fields.bool("stream", true), false, maxTokens(options), sampling,
                -1, CompletionRequest.stopStrings("options.stop", options.get("stop")), tools, format);
    }

    /** num_predict: at least 1, or -1 (no limit) or -2 (until the context is full), which are the same here. */
    private static int maxTokens(JsonFields options) {
        Integer predict = options.intOrNull("num_predict");
        if (predict == null || predict == -1 || predict == -2) return -1;
        if (predict < 1) {
            throw ApiException.invalid("options.num_predict", "'options.num_predict' must be at least 1, or -1 (no "
                    + "limit) or -2 (until the context is full), got " + predict);
        }
        return predict;
    }

    private static Float number(JsonFields fields, String field) {
        Double value = fields.numberOrNull(field);
        return value != null ? value.floatValue() : null;
    }

    /** Ollama's format: "json" (any JSON object), a JSON schema, or none ("" or absent). */
    static OutputFormat format(JsonNode format) {
        if (format == null || format.isNull() || (format.isTextual() && format.textValue().isEmpty())) {
            return new OutputFormat.Text();
        }
        if (format.isTextual() && format.textValue().equals("json")) return new OutputFormat.JsonObject();
        if (format.isObject()) return new OutputFormat.JsonSchema(format, "format");
        throw ApiException.invalid("format", "'format' must be \"json\" or a JSON schema (an object), got "
                + (format.isTextual() ? quoted(format.textValue()) : kind(format)));
    }

    /** think: a boolean, or a level ("high", "medium", "low"), which for Qwen3 only turns thinking on. */
    private static Boolean think(JsonFields fields) {
        JsonNode think = fields.get("think");
        if (think == null || think.isNull()) return null;
        if (think.isBoolean()) return think.booleanValue();
        if (think.isTextual() && Set.of("high", "medium", "low").contains(think.textValue())) return true;
        throw ApiException.invalid("think", "'think' must be true, false, \"high\", \"medium\" or \"low\", got "
                + (think.isTextual() ? quoted(think.textValue()) : kind(think)));
    }

    private static void refuseNonEmpty(JsonFields fields, String field, String message) {
        JsonNode node = fields.get(field);
        if (node != null && !node.isNull() && !(node.isArray() && node.isEmpty())) {
            throw ApiException.unsupported(field, message);
        }
    }

    private static List<ChatMessage> messages(JsonFields body) {
        int count = body.array("messages").size();
        List<ChatMessage> result = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            JsonFields message = body.element("messages", i);
            String role = message.textOrNull("role");
            if (role == null) throw ApiException.invalid(message.name("role"), message.name("role") + " is required");
            if (!ROLES.contains(role)) {
                throw ApiException.unsupported(message.name("role"), "role " + quoted(role) + " is not supported "
                        + "(system, user, assistant or tool)");
            }
            refuseNonEmpty(message, "images", "'" + message.name("images") + "': images are not supported by this "
                    + "server: the model reads text only");
            String content = message.textOrNull("content");
            message.textOrNull("tool_name"); // a string if given; Qwen3's template shows results in call order
            boolean assistant = role.equals("assistant");
            String thinking = assistant ? message.textOrNull("thinking") : null;
            List<ToolCall> calls = assistant ? toolCalls(message) : List.of();
            result.add(new ChatMessage(role, content != null ? content : "", thinking, calls));
        }
        return result;
    }

    /** An assistant message's calls, each {@code {"function": {"name", "arguments": {...}}}}. */
    private static List<ToolCall> toolCalls(JsonFields message) {
        if (!message.has("tool_calls")) return List.of();
        List<ToolCall> calls = new ArrayList<>();
        int count = message.array("tool_calls").size();
        for (int j = 0; j < count; j++) {
            JsonFields function = message.element("tool_calls", j).object("function");
            String name = function.textOrNull("name");
            if (name == null) {
                throw ApiException.invalid(function.name("name"), function.name("name") + " is required");
            }
            JsonNode arguments = function.get("arguments");
            if (arguments == null || arguments.isNull()) {
                arguments = Exchange.JSON.createObjectNode();
            } else if (!arguments.isObject()) {
                throw ApiException.wrongType(function.name("arguments"), "an object", kind(arguments));
            }
            calls.add(new ToolCall(name, arguments));
        }
        return List.copyOf(calls);
    }
}
