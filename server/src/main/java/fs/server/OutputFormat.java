package fs.server;

import static fs.server.CompletionRequest.kind;
import static fs.server.CompletionRequest.quoted;

import com.fasterxml.jackson.databind.JsonNode;
import fs.json.JsonFields;

/**
 * What shape the answer must have, as a request asks for it: OpenAI's {@code response_format} ({@code text},
 * {@code json_object}, {@code json_schema}) or llama-server's top-level {@code grammar} (GBNF) and
 * {@code json_schema}. At most one of them may constrain an answer.
 */
sealed interface OutputFormat {
    /** Free text. */
    record Text() implements OutputFormat {}

    /** Any JSON object. */
    record JsonObject() implements OutputFormat {}

    /** JSON that {@code schema} accepts; {@code param} names the schema's field, for errors about it. */
    record JsonSchema(JsonNode schema, String param) implements OutputFormat {}

    /** Text that the GBNF grammar accepts. */
    record Gbnf(String grammar, String param) implements OutputFormat {}

    /** Reads the request's format fields; a second constraining one is refused, naming it. */
    static OutputFormat read(JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        OutputFormat format = responseFormat(fields, body.get("response_format"));
        String grammar = fields.textOrNull("grammar");
        if (grammar != null) format = only(format, new Gbnf(grammar, "grammar"), "grammar");
        JsonNode schema = body.get("json_schema");
        if (schema != null && !schema.isNull()) {
            if (!schema.isObject()) {
                throw ApiException.wrongType("json_schema", "an object (a JSON schema)", kind(schema));
            }
            format = only(format, new JsonSchema(schema, "json_schema"), "json_schema");
        }
        return format;
    }

    /**
     * Reads the Responses API's {@code text.format}: {@code text}, {@code json_object}, or {@code json_schema} with
     * its name and schema on the format itself.
     */
    static OutputFormat textFormat(JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        if (!fields.has("text")) return new Text();
        JsonFields text = fields.object("text");
        text.textOrNull("verbosity"); // a string if given; the model has no setting for it
        if (!text.has("format")) return new Text();
        JsonFields format = text.object("format");
        String type = format.textOrNull("type");
        if (type == null) throw ApiException.invalid("text.format.type", "'text.format.type' is required");
        return switch (type) {
            case "text" -> new Text();
            case "json_object" -> new JsonObject();
            case "json_schema" -> {
                if (format.textOrNull("name") == null) {
                    throw ApiException.invalid("text.format.name", "'text.format.name' is required for the type "
                            + "\"json_schema\"");
                }
                format.textOrNull("description"); // a string if given
                format.boolOrNull("strict"); // the answer always follows the schema
                JsonNode schema = format.get("schema");
                if (schema == null || schema.isNull()) {
                    throw ApiException.invalid("text.format.schema", "'text.format.schema' is required for the type "
                            + "\"json_schema\"");
                }
                if (!schema.isObject()) {
                    throw ApiException.wrongType("text.format.schema", "an object (a JSON schema)", kind(schema));
                }
                yield new JsonSchema(schema, "text.format.schema");
            }
            default -> throw ApiException.invalid("text.format.type", "'text.format.type' must be \"text\", "
                    + "\"json_object\" or \"json_schema\", got " + quoted(type));
        };
    }

    private static OutputFormat only(OutputFormat earlier, OutputFormat next, String param) {
        if (!(earlier instanceof Text)) {
            throw ApiException.invalid(param, "'" + param + "' cannot be combined with another constraint on the "
                    + "answer (response_format, grammar or json_schema): give one");
        }
        return next;
    }

    private static OutputFormat responseFormat(JsonFields body, JsonNode format) {
        if (format == null || format.isNull()) return new Text();
        if (!format.isObject()) throw ApiException.wrongType("response_format", "an object", kind(format));
        JsonFields fields = body.inner("response_format", format);
        String type = fields.textOrNull("type");
        if (type == null) throw ApiException.invalid("response_format.type", "'response_format.type' is required");
        return switch (type) {
            case "text" -> new Text();
            case "json_object" -> {
                // llama-server's extension: a json_object format may carry the schema itself.
                JsonNode schema = format.get("schema");
                if (schema == null || schema.isNull()) yield new JsonObject();
                if (!schema.isObject()) {
                    throw ApiException.wrongType("response_format.schema", "an object (a JSON schema)", kind(schema));
                }
                yield new JsonSchema(schema, "response_format.schema");
            }
            case "json_schema" -> {
                JsonNode spec = format.get("json_schema");
                if (spec == null || spec.isNull()) {
                    throw ApiException.invalid("response_format.json_schema",
                            "'response_format.json_schema' is required for the type \"json_schema\"");
                }
                if (!spec.isObject()) {
                    throw ApiException.wrongType("response_format.json_schema", "an object", kind(spec));
                }
                JsonFields specFields = fields.inner("json_schema", spec);
                if (specFields.textOrNull("name") == null) {
                    throw ApiException.invalid("response_format.json_schema.name",
                            "'response_format.json_schema.name' is required");
                }
                specFields.textOrNull("description"); // a string if given
                specFields.boolOrNull("strict"); // the answer always follows the schema
                JsonNode schema = spec.get("schema");
                if (schema == null || schema.isNull()) yield new JsonObject(); // OpenAI: no schema, any object
                if (!schema.isObject()) {
                    throw ApiException.wrongType("response_format.json_schema.schema", "an object (a JSON schema)",
                            kind(schema));
                }
                yield new JsonSchema(schema, "response_format.json_schema.schema");
            }
            default -> throw ApiException.invalid("response_format.type", "'response_format.type' must be \"text\", "
                    + "\"json_object\" or \"json_schema\", got " + quoted(type));
        };
    }
}
