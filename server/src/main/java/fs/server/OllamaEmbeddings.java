package fs.server;

import static fs.server.CompletionRequest.kind;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.json.JsonFields;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Answers Ollama's {@code POST /api/embed} ({@code input} a string or strings; {@code truncate}, true by default, cuts
 * an input longer than the context; {@code dimensions}; normalized vectors) and the older {@code POST /api/embeddings}
 * ({@code prompt}, one vector, not normalized, as Ollama answers it), on the retrieval the OpenAI route uses.
 */
final class OllamaEmbeddings {
    private OllamaEmbeddings() {}

    static void embed(Exchange exchange, ServedModel served) throws IOException {
        long start = System.nanoTime();
        JsonFields fields = JsonFields.of(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES),
                CompletionRequest.API_ERRORS);
        String model = OllamaRequest.model(fields);
        OllamaModels.requireServed(served, model);
        Integer dimensions = fields.intOrNull("dimensions");
        if (dimensions != null && dimensions < 1) {
            throw ApiException.invalid("dimensions", "'dimensions' must be at least 1, got " + dimensions);
        }
        RetrievalHandler.Embedded embedded = RetrievalHandler.embed(served, inputs(fields.get("input")),
                dimensions != null ? dimensions : 0, true, fields.bool("truncate", true));

        ObjectNode response = JsonNodeFactory.instance.objectNode();
        response.put("model", model);
        ArrayNode embeddings = response.putArray("embeddings");
        for (float[] vector : embedded.vectors()) vector(embeddings.addArray(), vector);
        response.put("total_duration", System.nanoTime() - start);
        response.put("load_duration", 0);
        response.put("prompt_eval_count", embedded.inputs().stream().mapToInt(ids -> ids.length).sum());
        exchange.sendJson(200, response);
    }

    static void embeddings(Exchange exchange, ServedModel served) throws IOException {
        JsonFields fields = JsonFields.of(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES),
                CompletionRequest.API_ERRORS);
        OllamaModels.requireServed(served, OllamaRequest.model(fields));
        String prompt = fields.textOrNull("prompt");
        if (prompt == null || prompt.isEmpty()) throw ApiException.invalid("prompt", "prompt is required");
        RetrievalHandler.Embedded embedded = RetrievalHandler.embed(served,
                new EmbeddingRequest.Inputs.Texts(List.of(prompt)), 0, false, true);

        ObjectNode response = JsonNodeFactory.instance.objectNode();
        vector(response.putArray("embedding"), embedded.vectors().getFirst());
        exchange.sendJson(200, response);
    }

    private static EmbeddingRequest.Inputs inputs(JsonNode input) {
        if (input == null || input.isNull()) throw ApiException.invalid("input", "input is required");
        List<String> texts = new ArrayList<>();
        if (input.isTextual()) {
            texts.add(input.textValue());
        } else if (input.isArray() && !input.isEmpty()) {
            for (int i = 0; i < input.size(); i++) {
                if (!input.get(i).isTextual()) {
                    throw ApiException.wrongType("input[" + i + "]", "a string", kind(input.get(i)));
                }
                texts.add(input.get(i).textValue());
            }
        } else {
            throw ApiException.wrongType("input", "a string or an array of strings",
                    input.isArray() ? "an empty array" : kind(input));
        }
        if (texts.size() > EmbeddingRequest.MAX_INPUTS) {
            throw ApiException.invalid("input", "'input' holds " + texts.size() + " inputs, more than the "
                    + EmbeddingRequest.MAX_INPUTS + " one request may carry: send them in several requests");
        }
        if (texts.contains("")) throw ApiException.invalid("input", "'input' holds an empty string");
        return new EmbeddingRequest.Inputs.Texts(texts);
    }

    private static void vector(ArrayNode array, float[] vector) {
        for (float v : vector) array.add(v);
    }
}
