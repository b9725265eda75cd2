package fs.server;

import static fs.server.CompletionRequest.kind;

import com.fasterxml.jackson.databind.JsonNode;
import fs.json.JsonFields;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code POST /v1/embeddings} request, as OpenAI defines it: {@code input} a string, an array of strings, an array
 * of token ids or an array of such arrays; {@code encoding_format} "float" (the default) or "base64"; {@code
 * dimensions} to cut the vectors to (Matryoshka). Besides OpenAI's fields, {@code truncate} (as Jina's and TEI's)
 * keeps the first tokens of an input longer than the context rather than refusing it. Every problem is a 400 naming
 * the field.
 *
 * @param model      the model named, null when none was
 * @param inputs     what to embed, in order
 * @param base64     whether the vectors are sent as base64 of their little-endian float32 bytes
 * @param dimensions the entries kept, 0: all
 * @param truncate   whether an input longer than the context keeps its first tokens
 */
record EmbeddingRequest(String model, Inputs inputs, boolean base64, int dimensions, boolean truncate) {
    /** The most inputs one request may carry: OpenAI's limit. */
    static final int MAX_INPUTS = 2048;

    /** What to embed: texts (the tokenizer's appended token added) or token ids (embedded as given). */
    sealed interface Inputs {
        int size();

        record Texts(List<String> texts) implements Inputs {
            @Override
            public int size() {
                return texts.size();
            }
        }

        record Tokens(List<int[]> ids) implements Inputs {
            @Override
            public int size() {
                return ids.size();
            }
        }
    }

    static EmbeddingRequest of(JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        String format = fields.textOrNull("encoding_format");
        if (format != null && !format.equals("float") && !format.equals("base64")) {
            throw ApiException.invalid("encoding_format", "'encoding_format' must be \"float\" or \"base64\", got "
                    + CompletionRequest.quoted(format));
        }
        Integer dimensions = fields.intOrNull("dimensions");
        if (dimensions != null && dimensions < 1) {
            throw ApiException.invalid("dimensions", "'dimensions' must be at least 1, got " + dimensions);
        }
        return new EmbeddingRequest(fields.textOrNull("model"), inputs(body.get("input")),
                "base64".equals(format), dimensions == null ? 0 : dimensions, fields.bool("truncate", false));
    }

    private static Inputs inputs(JsonNode input) {
        if (input == null || input.isNull()) throw ApiException.invalid("input", "'input' is required");
        if (input.isTextual()) return new Inputs.Texts(List.of(text("input", input)));
        if (!input.isArray()) {
            throw ApiException.wrongType("input", "a string, an array of strings or an array of token ids",
                    kind(input));
        }
        if (input.isEmpty()) throw ApiException.invalid("input", "'input' must not be an empty array");
        if (input.size() > MAX_INPUTS) {
            throw ApiException.invalid("input", "'input' holds " + input.size() + " inputs, more than the "
                    + MAX_INPUTS + " one request may carry: send them in several requests");
        }
        JsonNode first = input.get(0);
        if (first.isTextual()) {
            List<String> texts = new ArrayList<>();
            for (int i = 0; i < input.size(); i++) texts.add(text("input[" + i + "]", input.get(i)));
            return new Inputs.Texts(texts);
        }
        if (first.isArray()) {
            List<int[]> lists = new ArrayList<>();
            for (int i = 0; i < input.size(); i++) lists.add(ids("input[" + i + "]", input.get(i)));
            return new Inputs.Tokens(lists);
        }
        return new Inputs.Tokens(List.of(ids("input", input)));
    }

    private static String text(String field, JsonNode node) {
        if (!node.isTextual()) throw ApiException.wrongType(field, "a string", kind(node));
        if (node.textValue().isEmpty()) throw ApiException.invalid(field, "'" + field + "' is an empty string");
        return node.textValue();
    }

    private static int[] ids(String field, JsonNode node) {
        if (!node.isArray()) throw ApiException.wrongType(field, "an array of token ids", kind(node));
        if (node.isEmpty()) throw ApiException.invalid(field, "'" + field + "' is an empty array of token ids");
        int[] ids = new int[node.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode id = node.get(i);
            if (!id.isIntegralNumber() || !id.canConvertToInt()) {
                throw ApiException.wrongType(field + "[" + i + "]", "a token id", kind(id));
            }
            ids[i] = id.intValue();
        }
        return ids;
    }
}
