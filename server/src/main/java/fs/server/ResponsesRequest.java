package fs.server;

import static fs.server.CompletionRequest.kind;
import static fs.server.CompletionRequest.quoted;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import fs.json.JsonFields;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The body of a {@code POST /v1/responses} request (OpenAI's Responses API), read and checked into the one
 * {@link CompletionRequest} the engine answers: {@code instructions} and the {@code input} items become the chat's
 * messages, {@code tools} and {@code text.format} its tools and format. The server keeps no responses, so what would
 * need a kept one ({@code previous_response_id}, {@code conversation}, item references, {@code background}) is refused
 * (400, naming the field); {@code store} is accepted and answered statelessly. Fields it does not know are ignored, as
 * for chat completions.
 *
 * @param completion the request the engine answers
 * @param echo       the request's settings as the response object repeats them
 */
record ResponsesRequest(CompletionRequest completion, ObjectNode echo) {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    /** A message item's role, as the chat template names it. */
    private static final Map<String, String> ROLES = Map.of("system", "system", "developer", "system",
            "user", "user", "assistant", "assistant");

    /** OpenAI's reasoning efforts; "none" and "minimal" turn Qwen3's thinking off, the others leave it on. */
    private static final Set<String> EFFORTS = Set.of("none", "minimal", "low", "medium", "high", "xhigh", "max");

    /** The most metadata pairs OpenAI allows. */
    private static final int MAX_METADATA = 16;

    /** Reads a Responses API request. */
    static ResponsesRequest read(JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        refuseKeptState(fields);
        fields.boolOrNull("store"); // a boolean if given: nothing is kept either way
        fields.textOrNull("user"); // a string if given
        String instructions = fields.textOrNull("instructions");
        List<ChatMessage> messages = messages(fields, instructions);
        ObjectNode reasoning = reasoning(fields);
        String effort = reasoning.path("effort").textValue();
        Boolean thinking = effort == null ? null : !(effort.equals("none") || effort.equals("minimal"));

        ChatTools tools = tools(fields);
        OutputFormat format = OutputFormat.textFormat(body);
        if (tools.offered() && !(format instanceof OutputFormat.Text)) {
            throw ApiException.unsupported("tools", "'tools' cannot be combined with a structured 'text.format' by "
                    + "this server: a call is JSON of its own shape");
        }
        Integer maxOutput = fields.intOrNull("max_output_tokens");
        if (maxOutput != null && maxOutput < 1) {
            throw ApiException.invalid("max_output_tokens", "'max_output_tokens' must be at least 1, got " + maxOutput);
        }
        Double temperature = fields.numberOrNull("temperature");
        Double topP = fields.numberOrNull("top_p");
        CompletionRequest.Sampling sampling = new CompletionRequest.Sampling(floatOrNull(temperature), null,
                floatOrNull(topP), null, null, null, null, null);
        CompletionRequest completion = new CompletionRequest(fields.textOrNull("model"),
                new CompletionRequest.Prompt.Chat(messages, thinking), fields.bool("stream", false), false,
                maxOutput != null ? maxOutput : -1, sampling, -1, List.of(), tools, format);

        ObjectNode echo = JSON.objectNode();
        echo.put("instructions", instructions);
        echo.put("max_output_tokens", maxOutput);
        echo.set("metadata", metadata(fields));
        echo.put("parallel_tool_calls", fields.bool("parallel_tool_calls", true));
        echo.set("reasoning", reasoning);
        echo.put("temperature", temperature);
        echo.put("top_p", topP);
        echo.set("text", JSON.objectNode().set("format", fields.has("text") && body.get("text").hasNonNull("format")
                ? body.get("text").get("format") : JSON.objectNode().put("type", "text")));
        echo.set("tool_choice", fields.has("tool_choice") ? body.get("tool_choice") : JSON.textNode("auto"));
        echo.set("tools", echoedTools(body));
        echo.put("truncation", "disabled");
        if (fields.has("user")) echo.put("user", fields.textOrNull("user"));
        return new ResponsesRequest(completion, echo);
    }

    /** What only a server that keeps responses (or conversations, or runs them in the background) can answer. */
    private static void refuseKeptState(JsonFields fields) {
        for (String field : List.of("previous_response_id", "conversation")) {
            if (fields.has(field)) {
                throw ApiException.unsupported(field, "'" + field + "' is not supported: this server keeps no "
                        + "responses (it answers as with store: false); send the earlier turns as 'input' items");
            }
        }
        if (Boolean.TRUE.equals(fields.boolOrNull("background"))) {
            throw ApiException.unsupported("background", "'background' responses are not supported: this server "
                    + "keeps no responses to fetch later; stream the answer instead");
        }
        if (fields.has("prompt")) {
            throw ApiException.unsupported("prompt", "'prompt' (a stored prompt template) is not supported by this "
                    + "server: send 'instructions' and 'input'");
        }
    }

    /**
     * The chat: the instructions and the system (or developer) messages that open the input as one system message
     * (the chat template takes one, first), then the input's messages, calls and call outputs in order. A model's
     * reasoning item goes with the assistant message or call that follows it; calls that follow an assistant message
     * are that message's calls.
     */
    private static List<ChatMessage> messages(JsonFields body, String instructions) {
        if (!body.has("input")) throw ApiException.invalid("input", "'input' is required");
        JsonNode input = body.get("input");
        List<ChatMessage> messages = new ArrayList<>();
        StringBuilder system = new StringBuilder(instructions != null ? instructions : "");
        if (input.isTextual()) {
            if (!system.isEmpty()) messages.add(ChatMessage.system(system.toString()));
            messages.add(ChatMessage.user(input.textValue()));
            return messages;
        }
        if (!input.isArray()) throw ApiException.wrongType("input", "a string or an array of items", kind(input));
        if (input.isEmpty()) throw ApiException.invalid("input", "'input' must hold at least one item");
        Set<String> callIds = new HashSet<>();
        String reasoning = null; // of the assistant turn that follows
        boolean opening = true; // no message but system ones yet
        for (int i = 0; i < input.size(); i++) {
            JsonFields item = body.element("input", i);
            String at = "input[" + i + "]";
            String type = item.textOrNull("type");
            if (type == null && item.has("role")) type = "message"; // the short form: {role, content}
            if (type == null) throw ApiException.invalid(at + ".type", "'" + at + ".type' is required");
            switch (type) {
                case "message" -> {
                    String role = role(item, at);
                    String content = content(item, at);
                    if (role.equals("system") && opening) {
                        if (!system.isEmpty()) system.append("\n\n");
                        system.append(content);
                        continue;
                    }
                    if (opening && !system.isEmpty()) messages.add(ChatMessage.system(system.toString()));
                    opening = false;
                    messages.add(new ChatMessage(role, content, role.equals("assistant") ? reasoning : null,
                            List.of()));
                    reasoning = null;
                }
                case "function_call" -> {
                    if (opening && !system.isEmpty()) messages.add(ChatMessage.system(system.toString()));
                    opening = false;
                    String callId = required(item, "call_id", at);
                    String name = required(item, "name", at);
                    ToolCall call = CompletionRequest.toolCall(name, required(item, "arguments", at),
                            at + ".arguments");
                    callIds.add(callId);
                    ChatMessage last = messages.isEmpty() ? null : messages.getLast();
                    if (last != null && last.role().equals("assistant") && reasoning == null) {
                        List<ToolCall> calls = new ArrayList<>(last.toolCalls());
                        calls.add(call);
                        messages.set(messages.size() - 1,
                                new ChatMessage("assistant", last.content(), last.reasoningContent(), calls));
                    } else {
                        messages.add(new ChatMessage("assistant", "", reasoning, List.of(call)));
                    }
                    reasoning = null;
                }
                case "function_call_output" -> {
                    String callId = required(item, "call_id", at);
                    if (!callIds.contains(callId)) {
                        throw ApiException.invalid(at + ".call_id", "no function_call item before " + at
                                + " has the call_id " + quoted(callId));
                    }
                    messages.add(ChatMessage.tool(output(item, at)));
                }
                case "reasoning" -> reasoning = reasoningText(item, at);
                case "item_reference" -> throw ApiException.unsupported(at + ".type", "item references are not "
                        + "supported: this server keeps no responses; send the items themselves");
                default -> throw ApiException.unsupported(at + ".type", "input items of type " + quoted(type)
                        + " are not supported by this server (message, function_call, function_call_output, "
                        + "reasoning)");
            }
        }
        if (opening) {
            throw ApiException.invalid("input", "'input' holds only system or developer messages: add a user message");
        }
        return messages;
    }

    private static String role(JsonFields item, String at) {
        String given = item.textOrNull("role");
        if (given == null) throw ApiException.invalid(at + ".role", "'" + at + ".role' is required");
        String role = ROLES.get(given);
        if (role == null) {
            throw ApiException.unsupported(at + ".role", "role " + quoted(given) + " is not supported (user, "
                    + "assistant, system or developer)");
        }
        return role;
    }

    /** A message's content: a string, or text parts (input_text, output_text) joined. */
    private static String content(JsonFields item, String at) {
        JsonNode content = item.get("content");
        if (content == null || content.isNull()) {
            throw ApiException.invalid(at + ".content", "'" + at + ".content' is required");
        }
        if (content.isTextual()) return content.textValue();
        return textParts(item, "content", at + ".content", Set.of("input_text", "output_text"));
    }

    /** A call's output: a string, or input_text parts joined. */
    private static String output(JsonFields item, String at) {
        JsonNode output = item.get("output");
        if (output == null || output.isNull()) {
            throw ApiException.invalid(at + ".output", "'" + at + ".output' is required");
        }
        if (output.isTextual()) return output.textValue();
        return textParts(item, "output", at + ".output", Set.of("input_text"));
    }

    /** The text of an array of parts, each of one of {@code types}; the model reads text only. */
    private static String textParts(JsonFields item, String field, String at, Set<String> types) {
        JsonNode parts = item.get(field);
        if (!parts.isArray()) throw ApiException.wrongType(at, "a string or an array of parts", kind(parts));
        StringBuilder text = new StringBuilder();
        for (int j = 0; j < parts.size(); j++) {
            JsonFields part = item.element(field, j);
            String partAt = at + "[" + j + "]";
            String type = part.textOrNull("type");
            if (type == null || !types.contains(type)) {
                throw ApiException.unsupported(partAt + ".type", "content parts of type " + quoted(type)
                        + " are not supported here (" + String.join(", ", types.stream().sorted().toList())
                        + "): the model reads text only");
            }
            text.append(required(part, "text", partAt));
        }
        return text.toString();
    }

    /** A reasoning item's text: its reasoning_text content (as this server writes it), else its summary. */
    private static String reasoningText(JsonFields item, String at) {
        String field = item.has("content") ? "content" : "summary";
        if (!item.has(field)) return null;
        StringBuilder text = new StringBuilder();
        int count = item.array(field).size();
        for (int j = 0; j < count; j++) text.append(required(item.element(field, j), "text", at + "." + field
                + "[" + j + "]"));
        return text.isEmpty() ? null : text.toString();
    }

    private static String required(JsonFields fields, String field, String at) {
        String value = fields.textOrNull(field);
        if (value == null) throw ApiException.invalid(at + "." + field, "'" + at + "." + field + "' is required");
        return value;
    }

    /** {@code reasoning} as the response repeats it: its effort (checked) and summary. */
    private static ObjectNode reasoning(JsonFields body) {
        ObjectNode echo = JSON.objectNode();
        String effort = null;
        String summary = null;
        if (body.has("reasoning")) {
            JsonFields reasoning = body.object("reasoning");
            effort = reasoning.textOrNull("effort");
            if (effort != null && !EFFORTS.contains(effort)) {
                throw ApiException.invalid("reasoning.effort", "'reasoning.effort' must be one of "
                        + String.join(", ", EFFORTS.stream().sorted().toList()) + ", got " + quoted(effort));
            }
            summary = reasoning.textOrNull("summary"); // accepted: the reasoning comes whole, not summarized
        }
        echo.put("effort", effort);
        echo.put("summary", summary);
        return echo;
    }

    /** The metadata, checked: at most 16 pairs of strings; an empty object when none was given. */
    private static ObjectNode metadata(JsonFields body) {
        if (!body.has("metadata")) return JSON.objectNode();
        JsonFields metadata = body.object("metadata");
        JsonNode node = body.get("metadata");
        if (node.size() > MAX_METADATA) {
            throw ApiException.invalid("metadata", "'metadata' may hold at most " + MAX_METADATA + " pairs, got "
                    + node.size());
        }
        node.fieldNames().forEachRemaining(metadata::text);
        return (ObjectNode) node;
    }

    /**
     * {@code tools} (function tools in the flat shape: name, description, parameters and strict on the tool itself),
     * under {@code tool_choice} and {@code parallel_tool_calls}.
     */
    private static ChatTools tools(JsonFields body) {
        List<ChatTools.Function> functions = new ArrayList<>();
        if (body.has("tools")) {
            Set<String> names = new HashSet<>();
            int count = body.array("tools").size();
            for (int i = 0; i < count; i++) {
                JsonFields tool = body.element("tools", i);
                String at = "tools[" + i + "]";
                String type = tool.textOrNull("type");
                if (type == null) throw ApiException.invalid(at + ".type", "'" + at + ".type' is required");
                if (!type.equals("function")) {
                    throw ApiException.unsupported(at + ".type", "tools of type " + quoted(type)
                            + " are not supported by this server (only \"function\")");
                }
                tool.boolOrNull("strict"); // checked; calls always follow the schema
                JsonNode parameters = tool.get("parameters");
                if (parameters != null && parameters.isNull()) parameters = null;
                if (parameters != null && !parameters.isObject()) {
                    throw ApiException.wrongType(at + ".parameters", "an object (a JSON schema)", kind(parameters));
                }
                functions.add(ChatTools.function(at, tool.textOrNull("name"), tool.textOrNull("description"),
                        parameters, "parameters", names));
            }
        }
        JsonNode choice = body.get("tool_choice");
        boolean choiceGiven = choice != null && !choice.isNull();
        if (choiceGiven && functions.isEmpty()) {
            throw ApiException.invalid("tool_choice", "'tool_choice' is only allowed when 'tools' are given");
        }
        boolean parallel = body.bool("parallel_tool_calls", true);
        if (functions.isEmpty()) return ChatTools.NONE;
        return new ChatTools(functions, choiceGiven ? choice(body, functions) : new ChatTools.Choice.Auto(), parallel);
    }

    /** {@code tool_choice}: "auto", "none", "required", or {@code {"type": "function", "name": ...}}. */
    private static ChatTools.Choice choice(JsonFields body, List<ChatTools.Function> functions) {
        JsonNode node = body.get("tool_choice");
        if (node.isTextual()) {
            return switch (node.textValue()) {
                case "auto" -> new ChatTools.Choice.Auto();
                case "none" -> new ChatTools.Choice.None();
                case "required" -> new ChatTools.Choice.Required();
                default -> throw ApiException.invalid("tool_choice", "'tool_choice' must be \"auto\", \"none\", "
                        + "\"required\" or {\"type\": \"function\", \"name\": ...}, got " + quoted(node.textValue()));
            };
        }
        if (!node.isObject()) throw ApiException.wrongType("tool_choice", "a string or an object", kind(node));
        JsonFields choice = body.object("tool_choice");
        String type = choice.textOrNull("type");
        if (!"function".equals(type)) {
            throw ApiException.invalid("tool_choice.type", "'tool_choice.type' must be \"function\", got "
                    + quoted(type));
        }
        String name = choice.textOrNull("name");
        if (name == null) throw ApiException.invalid("tool_choice.name", "'tool_choice.name' is required");
        if (functions.stream().noneMatch(f -> f.name().equals(name))) {
            throw ApiException.invalid("tool_choice.name", "'tool_choice' names the function " + quoted(name)
                    + ", which is not among the tools");
        }
        return new ChatTools.Choice.Named(name);
    }

    /** The tools as the response lists them: each with its parameters and strict flag, null when not given. */
    private static ArrayNode echoedTools(JsonNode body) {
        ArrayNode tools = JSON.arrayNode();
        JsonNode given = body.get("tools");
        if (given == null || given.isNull()) return tools;
        for (JsonNode tool : given) {
            ObjectNode echoed = ((ObjectNode) tool).deepCopy();
            if (!echoed.has("parameters")) echoed.putNull("parameters");
            if (!echoed.has("strict")) echoed.putNull("strict");
            tools.add(echoed);
        }
        return tools;
    }

    private static Float floatOrNull(Double value) {
        return value != null ? value.floatValue() : null;
    }
}
