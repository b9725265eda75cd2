package fs.embed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import fs.model.Golden;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The float64 reference's embeddings and rerank scores committed with models/tiny-embed*, models/tiny-rerank*
 * (golden/embedding.json, golden/rerank.json; tools/reference/make_embedding_goldens.py).
 */
record EmbeddingGolden(Path modelDir, int dimensions, String task, List<Text> texts, List<Pair> pairs) {
    static final List<String> EMBEDDING_CHECKPOINTS = List.of("tiny-embed", "tiny-embed-heldout");
    static final List<String> RERANK_CHECKPOINTS = List.of("tiny-rerank", "tiny-rerank-heldout");

    /** A text (a query already in the card's instruct form), its ids with the appended token, and its vectors. */
    record Text(String kind, String text, int[] ids, double[] vector, double[] truncated) {}

    /** A reranked pair: the prompt's ids, the last position's yes and no logits, and P(yes). */
    record Pair(String instruction, String query, String document, int[] ids, double yesLogit, double noLogit,
                double yesProbability) {}

    static EmbeddingGolden load(String checkpoint) throws IOException {
        Path dir = Golden.modelDir(checkpoint);
        boolean embedding = EMBEDDING_CHECKPOINTS.contains(checkpoint);
        JsonNode json = JsonMapper.builder().build()
                .readTree(dir.resolve("golden").resolve(embedding ? "embedding.json" : "rerank.json").toFile());
        List<Text> texts = new ArrayList<>();
        List<Pair> pairs = new ArrayList<>();
        for (JsonNode c : json.get("cases")) {
            if (embedding) {
                texts.add(new Text(c.get("kind").asText(), c.get("text").asText(), ints(c.get("ids")),
                        doubles(c.get("vector")), doubles(c.get("truncated"))));
            } else {
                pairs.add(new Pair(c.get("instruction").asText(), c.get("query").asText(), c.get("document").asText(),
                        ints(c.get("ids")), c.get("yes_logit").asDouble(), c.get("no_logit").asDouble(),
                        c.get("p_yes").asDouble()));
            }
        }
        return new EmbeddingGolden(dir, json.path("dimensions").asInt(0), json.path("task").asText(null), texts, pairs);
    }

    private static int[] ints(JsonNode array) {
        int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) values[i] = array.get(i).asInt();
        return values;
    }

    private static double[] doubles(JsonNode array) {
        double[] values = new double[array.size()];
        for (int i = 0; i < values.length; i++) values[i] = array.get(i).asDouble();
        return values;
    }
}
