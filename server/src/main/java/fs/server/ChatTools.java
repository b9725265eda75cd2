package fs.server;

import static fs.server.CompletionRequest.kind;
import static fs.server.CompletionRequest.quoted;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.json.JsonFields;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The functions a chat request offers the model ({@code tools}), whether and which it must call ({@code tool_choice})
 * and whether it may call several in one answer ({@code parallel_tool_calls}), read and checked as OpenAI defines
 * them.
 *
 * @param functions the offered functions, in the request's order; empty when none (then {@code choice} is NONE)
 * @param choice    what the model may or must do
 * @param parallel  whether one answer may hold several calls (else at most one)
 */
record ChatTools(List<Function> functions, Choice choice, boolean parallel) {

    /** No tools: the answer is text. */
    static final ChatTools NONE = new ChatTools(List.of(), new Choice.None(), true);

    /** OpenAI's rule for a function name; it also keeps the name a plain literal in a grammar. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /**
     * One offered function.
     *
     * @param name       what the model calls it by
     * @param parameters the JSON schema of its arguments (an object schema with no properties when not given)
     * @param definition the tool object as the request gave it: the chat template shows it to the model as is
     * @param schemaParam where its schema is in the request ({@code tools[i].function.parameters}, or another API's
     *                    field: {@code tools[i].input_schema}), for errors about it
     */
    record Function(String name, JsonNode parameters, JsonNode definition, String schemaParam) {}

    /** What {@code tool_choice} asks of the model. */
    sealed interface Choice {
        /** The model decides whether to call (OpenAI's default when tools are given). */
        record Auto() implements Choice {}

        /** The model must not call: the tools are not shown to it either. */
        record None() implements Choice {}

        /** The model must call one or more of the functions. */
        record Required() implements Choice {}

        /** The model must call this function. */
        record Named(String name) implements Choice {}
    }

    /** Whether the answer is looked through for calls. */
    boolean offered() {
        return !functions.isEmpty() && !(choice instanceof Choice.None);
    }

    /** The tool objects for the chat template: none when the model may not call. */
    List<JsonNode> templateTools() {
        return offered() ? functions.stream().map(Function::definition).toList() : List.of();
    }

    /** The functions the model may call under the choice: all, or the named one. */
    List<Function> callable() {
        if (choice instanceof Choice.Named named) {
            return functions.stream().filter(f -> f.name().equals(named.name())).toList();
        }
        return offered() ? functions : List.of();
    }

    /** Reads tools, tool_choice and parallel_tool_calls; the deprecated function fields are refused. */
    static ChatTools read(JsonNode body) {
        for (String legacy : List.of("functions", "function_call")) {
            JsonNode node = body.get(legacy);
            if (node != null && !node.isNull() && !(node.isArray() && node.isEmpty())) {
                throw ApiException.unsupported(legacy, "'" + legacy + "' (the deprecated function calling) is not "
                        + "supported by this server: use 'tools' and 'tool_choice'");
            }
        }
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        List<Function> functions = functions(fields);
        JsonNode choiceNode = body.get("tool_choice");
        boolean choiceGiven = choiceNode != null && !choiceNode.isNull();
        if (choiceGiven && functions.isEmpty()) {
            throw ApiException.invalid("tool_choice", "'tool_choice' is only allowed when 'tools' are given");
        }
        boolean parallel = fields.bool("parallel_tool_calls", true);
        if (functions.isEmpty()) return NONE;
        Choice choice = choiceGiven ? choice(fields, functions) : new Choice.Auto();
        return new ChatTools(functions, choice, parallel);
    }

    private static List<Function> functions(JsonFields body) {
        if (!body.has("tools")) return List.of();
        List<Function> functions = new ArrayList<>();
        Set<String> names = new HashSet<>();
        int count = body.array("tools").size();
        for (int i = 0; i < count; i++) {
            String at = "tools[" + i + "]";
            JsonFields tool = body.element("tools", i);
            String type = tool.textOrNull("type");
            if (type == null) throw ApiException.invalid(at + ".type", "'" + at + ".type' is required");
            if (!type.equals("function")) {
                throw ApiException.unsupported(at + ".type", "tools of type " + quoted(type)
                        + " are not supported by this server (only \"function\")");
            }
            if (!tool.has("function")) {
                throw ApiException.invalid(at + ".function", "'" + at + ".function' is required");
            }
            JsonFields function = tool.object("function");
            String name = function.textOrNull("name");
            checkName(name, at + ".function.name", names);
            function.textOrNull("description"); // checked: a string if given
            JsonNode parameters = function.get("parameters");
            if (parameters == null || parameters.isNull()) {
                parameters = noParameters();
            } else if (!parameters.isObject()) {
                throw ApiException.wrongType(at + ".function.parameters", "an object (a JSON schema)",
                        kind(parameters));
            }
            functions.add(new Function(name, parameters, body.array("tools").get(i), at + ".function.parameters"));
        }
        return List.copyOf(functions);
    }

    /**
     * A function offered in another API's flat shape, the tool at {@code at} with its name in {@code at.name}: checked
     * as OpenAI's are, and shown to the chat template as OpenAI's tool object, the shape the templates read.
     * {@code schemaField} names the field of its schema in the tool; {@code names} holds the names of the functions
     * before it, to refuse a second of the same name.
     */
    static Function function(String at, String name, String description, JsonNode parameters, String schemaField,
                             Set<String> names) {
        checkName(name, at + ".name", names);
        JsonNode schema = parameters != null ? parameters : noParameters();
        ObjectNode definition = JsonNodeFactory.instance.objectNode();
        definition.put("type", "function");
        ObjectNode function = definition.putObject("function");
        function.put("name", name);
        if (description != null) function.put("description", description);
        function.set("parameters", schema);
        return new Function(name, schema, definition, at + "." + schemaField);
    }

    /** A function's name: given, by OpenAI's rule, and not the name of one before it. */
    private static void checkName(String name, String param, Set<String> names) {
        if (name == null) throw ApiException.invalid(param, "'" + param + "' is required");
        if (!NAME.matcher(name).matches()) {
            throw ApiException.invalid(param, "the function name " + quoted(name)
                    + " must be 1 to 64 letters, digits, underscores or dashes");
        }
        if (!names.add(name)) throw ApiException.invalid(param, "two tools are named " + quoted(name));
    }

    /** The schema of a function that takes no arguments: an empty object. */
    private static ObjectNode noParameters() {
        ObjectNode schema = JsonNodeFactory.instance.objectNode();
        schema.put("type", "object");
        schema.putObject("properties");
        return schema;
    }

    private static Choice choice(JsonFields body, List<Function> functions) {
        JsonNode node = body.get("tool_choice");
        if (node.isTextual()) {
            return switch (node.textValue()) {
                case "auto" -> new Choice.Auto();
                case "none" -> new Choice.None();
                case "required" -> new Choice.Required();
                default -> throw ApiException.invalid("tool_choice", "'tool_choice' must be \"auto\", \"none\", "
                        + "\"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}, got "
                        + quoted(node.textValue()));
            };
        }
        if (!node.isObject()) throw ApiException.wrongType("tool_choice", "a string or an object", kind(node));
        JsonFields choice = body.inner("tool_choice", node);
        String type = choice.textOrNull("type");
        if (!"function".equals(type)) {
            throw ApiException.invalid("tool_choice.type", "'tool_choice.type' must be \"function\", got "
                    + quoted(type));
        }
        JsonNode function = node.get("function");
        if (function == null || !function.isObject()) {
            throw ApiException.invalid("tool_choice.function", "'tool_choice.function' must be an object with the "
                    + "name of the function to call");
        }
        String name = choice.inner("function", function).textOrNull("name");
        if (name == null) {
            throw ApiException.invalid("tool_choice.function.name", "'tool_choice.function.name' is required");
        }
        if (functions.stream().noneMatch(f -> f.name().equals(name))) {
            throw ApiException.invalid("tool_choice.function.name", "'tool_choice' names the function "
                    + quoted(name) + ", which is not among the tools");
        }
        return new Choice.Named(name);
    }
}
