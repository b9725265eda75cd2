package fs.server;

import static fs.server.CompletionRequest.kind;

import com.fasterxml.jackson.databind.JsonNode;
import fs.embed.Reranker;
import fs.json.JsonFields;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code POST /v1/rerank} request, in the shape llama-server, Jina and Cohere share: {@code query}, {@code
 * documents} (strings), {@code top_n} (default: all), and Qwen3-Reranker's {@code instruction} (default: the model
 * card's); {@code truncate} cuts the end of a document whose prompt is longer than the context rather than refusing
 * it. Every problem is a 400 naming the field.
 *
 * @param topN 0: every document
 */
record RerankRequest(String model, String query, List<String> documents, int topN, String instruction,
                     boolean truncate) {
    /** The most documents one request may rank: Cohere's limit. */
    static final int MAX_DOCUMENTS = 1000;

    static RerankRequest of(JsonNode body) {
        JsonFields fields = JsonFields.of(body, CompletionRequest.API_ERRORS);
        if (!fields.has("query")) throw ApiException.invalid("query", "'query' is required");
        String query = fields.text("query");
        if (query.isEmpty()) throw ApiException.invalid("query", "'query' is an empty string");
        Integer topN = fields.intOrNull("top_n");
        if (topN != null && topN < 1) throw ApiException.invalid("top_n", "'top_n' must be at least 1, got " + topN);
        String instruction = fields.textOrNull("instruction");
        if (instruction != null && instruction.isEmpty()) {
            throw ApiException.invalid("instruction", "'instruction' is an empty string");
        }
        return new RerankRequest(fields.textOrNull("model"), query, documents(body.get("documents")),
                topN == null ? 0 : topN, instruction != null ? instruction : Reranker.DEFAULT_INSTRUCTION,
                fields.bool("truncate", false));
    }

    private static List<String> documents(JsonNode documents) {
        if (documents == null || documents.isNull()) throw ApiException.invalid("documents", "'documents' is required");
        if (!documents.isArray()) throw ApiException.wrongType("documents", "an array of strings", kind(documents));
        if (documents.isEmpty()) throw ApiException.invalid("documents", "'documents' must not be an empty array");
        if (documents.size() > MAX_DOCUMENTS) {
            throw ApiException.invalid("documents", "'documents' holds " + documents.size() + " documents, more than "
                    + "the " + MAX_DOCUMENTS + " one request may rank: send them in several requests");
        }
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < documents.size(); i++) {
            JsonNode document = documents.get(i);
            String field = "documents[" + i + "]";
            if (!document.isTextual()) throw ApiException.wrongType(field, "a string", kind(document));
            if (document.textValue().isEmpty()) throw ApiException.invalid(field, "'" + field + "' is an empty string");
            texts.add(document.textValue());
        }
        return texts;
    }
}
