package fs.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.embed.Embeddings;
import fs.embed.Reranker;
import fs.embed.ScheduledRetrieval;
import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;

/**
 * Answers {@code POST /v1/embeddings} in OpenAI's shape and {@code POST /v1/rerank} in llama-server's (Jina's,
 * Cohere's): checks the request, tokenizes and checks the inputs against the model on the request's own thread, then
 * waits for the forwards, which run on the engine's scheduler thread between the chats' steps
 * ({@link ScheduledRetrieval}).
 */
final class RetrievalHandler {
    private RetrievalHandler() {}

    /** The vectors of a request's inputs, in order, and the token ids each was made from (cut when truncated). */
    record Embedded(List<float[]> vectors, List<int[]> inputs) {}

    static void embeddings(Exchange exchange, ServedModel served) throws IOException {
        EmbeddingRequest request = EmbeddingRequest.of(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES));
        served.requireNamed(request.model());
        Embedded embedded = embed(served, request.inputs(), request.dimensions(), true, request.truncate());
        exchange.sendJson(200, EmbeddingsResponse.of(embedded.vectors(), embedded.inputs(), served.id(),
                request.base64()));
    }

    /**
     * Embeds {@code inputs} with the served model: {@code dimensions} entries of each vector (0: all), normalized or
     * not; an input longer than the context is cut with {@code truncate}, else refused (400 naming "input").
     */
    static Embedded embed(ServedModel served, EmbeddingRequest.Inputs inputs, int dimensions, boolean normalize,
                          boolean truncate) {
        ScheduledRetrieval retrieval = served.retrieval();
        if (dimensions > retrieval.hiddenSize()) {
            throw ApiException.invalid("dimensions", "'dimensions' must be at most " + retrieval.hiddenSize()
                    + ", the model's embedding size, got " + dimensions);
        }
        List<int[]> ids = switch (inputs) {
            case EmbeddingRequest.Inputs.Texts texts -> texts.texts().stream().map(retrieval::tokens).toList();
            case EmbeddingRequest.Inputs.Tokens tokens -> tokens.ids();
        };
        int[][] fitted = inputProblem("input", () -> retrieval.fitted(ids, truncate));
        List<float[]> vectors = whileServing(() -> retrieval.embed(fitted,
                new Embeddings.Options(dimensions, normalize, truncate)));
        return new Embedded(vectors, List.of(fitted));
    }

    static void rerank(Exchange exchange, ServedModel served) throws IOException {
        RerankRequest request = RerankRequest.of(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES));
        served.requireNamed(request.model());
        ScheduledRetrieval retrieval = served.retrieval();
        int[][] prompts = inputProblem("documents", () -> retrieval.prompts(request.instruction(), request.query(),
                request.documents(), request.truncate()));
        double[] scores = whileServing(() -> retrieval.scores(prompts));

        ObjectNode response = JsonNodeFactory.instance.objectNode();
        response.put("model", served.id());
        response.put("object", "list");
        EmbeddingsResponse.usage(response, List.of(prompts));
        ArrayNode results = response.putArray("results");
        for (Reranker.Score score : Reranker.ranked(scores, request.topN())) {
            results.addObject().put("index", score.index()).put("relevance_score", score.relevance());
        }
        exchange.sendJson(200, response);
    }

    /** What the model refuses in the inputs (one too long, an id out of the vocabulary): a 400 naming {@code param}. */
    private static <T> T inputProblem(String param, Supplier<T> check) {
        try {
            return check.get();
        } catch (FsException e) {
            throw ApiException.invalid(param, e.getMessage());
        }
    }

    /** The forwards' result; a scheduler that closed first means the server is shutting down (503). */
    private static <T> T whileServing(Supplier<T> run) {
        try {
            return run.get();
        } catch (IllegalStateException e) {
            throw ApiException.unavailable("shutting_down", "the server is shutting down");
        }
    }
}
