package fs.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import fs.grammar.GrammarException;
import fs.grammar.JsonSchemaGbnf;
import java.util.regex.Pattern;

/**
 * A function the model may call in a {@link Chat} ({@link ChatParams#withTools}): the chat template shows it to the
 * model, and the calls the model makes come back in {@link Reply#toolCalls()}.
 *
 * @param name        what the model calls it by: 1 to 64 letters, digits, underscores or dashes
 * @param description what it does, for the model; null: none
 * @param parameters  the JSON schema of its arguments, as JSON text; null: it takes none (an empty object)
 */
public record Tool(String name, String description, String parameters) {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    static final ObjectMapper JSON = new ObjectMapper();

    /** Checks the name and that the parameters are a JSON object. */
    public Tool {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new FsException("a tool's name must be 1 to 64 letters, digits, underscores or dashes, got "
                    + (name == null ? "none" : fs.Quoted.quote(name)));
        }
        if (parameters != null) holdable(schema(parameters, "the parameters of the tool " + name),
                "the parameters of the tool " + name);
    }

    /** A tool with a description and the JSON schema of its parameters. */
    public static Tool of(String name, String description, String parameters) {
        return new Tool(name, description, parameters);
    }

    /** The schema of the arguments, as JSON. */
    JsonNode parametersSchema() {
        if (parameters != null) return schema(parameters, "the parameters of the tool " + name);
        return JSON.createObjectNode().put("type", "object").set("properties", JSON.createObjectNode());
    }

    /** The tool as Qwen3's template shows it: OpenAI's {"type": "function", "function": {...}}. */
    JsonNode definition() {
        var function = JSON.createObjectNode().put("name", name);
        if (description != null) function.put("description", description);
        function.set("parameters", parametersSchema());
        var tool = JSON.createObjectNode().put("type", "function");
        tool.set("function", function);
        return tool;
    }

    /** Checks that an answer can be held to {@code schema} (a grammar can express it). */
    static void holdable(JsonNode schema, String what) {
        try {
            JsonSchemaGbnf.toGbnf(schema);
        } catch (GrammarException e) {
            throw new FsException(what + " cannot be used: " + e.getMessage(), e);
        }
    }

    /** A JSON schema given as text: it must be a JSON object. */
    static JsonNode schema(String text, String what) {
        JsonNode node;
        try {
            node = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new FsException(what + " is not JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) throw new FsException(what + " must be a JSON object (a JSON schema)");
        return node;
    }
}
