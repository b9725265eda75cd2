package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/rerank} (and its aliases) on models/tiny-rerank-heldout served as {@code fs serve --rerank} serves
 * it, over raw HTTP in llama-server's shape: the scores equal the float64 reference's P(yes), highest first, cut to
 * top_n; every bad request is a 400 naming its field.
 */
class RerankServerTest {
    private static final String CHECKPOINT = "tiny-rerank-heldout";
    /** The logit goldens' tolerance, for a probability. */
    private static final double TOLERANCE = 1e-3;
    private static final ObjectMapper JSON = new ObjectMapper();

    private static RetrievalTestServer fixture;
    /** The golden pairs that share the first pair's query and instruction. */
    private static final List<JsonNode> sameQuery = new ArrayList<>();
    private static JsonNode otherInstruction;

    @BeforeAll
    static void start() throws Exception {
        fixture = RetrievalTestServer.start(CHECKPOINT, ServedTask.RERANK);
        JsonNode cases = fixture.golden("rerank.json").get("cases");
        JsonNode first = cases.get(0);
        for (JsonNode c : cases) {
            boolean same = c.get("query").equals(first.get("query"))
                    && c.get("instruction").equals(first.get("instruction"));
            if (same) sameQuery.add(c);
            else otherInstruction = c;
        }
        assertTrue(sameQuery.size() >= 3 && otherInstruction != null, "the golden's pairs as this test needs them");
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    /** A request ranking the shared query's documents, with {@code extra} fields. */
    private static String request(String extra) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", CHECKPOINT);
        body.put("query", sameQuery.getFirst().get("query").asText());
        ArrayNode documents = body.putArray("documents");
        for (JsonNode c : sameQuery) documents.add(c.get("document").asText());
        String json = body.toString();
        return extra.isEmpty() ? json : json.substring(0, json.length() - 1) + "," + extra + "}";
    }

    /** The documents' indices by the golden's P(yes), highest first. */
    private static List<Integer> goldenOrder() {
        return IntStream.range(0, sameQuery.size()).boxed()
                .sorted(Comparator.comparingDouble(i -> -sameQuery.get(i).get("p_yes").asDouble())).toList();
    }

    @Test
    void scoresAndOrderAreTheReferencesOnEveryPath() throws Exception {
        for (String path : List.of("/v1/rerank", "/rerank", "/v2/rerank")) {
            RetrievalTestServer.Answer answer = fixture.post(path, request(""));
            assertEquals(200, answer.status(), path + ": " + answer.body());
            assertEquals(CHECKPOINT, answer.body().get("model").asText());
            assertEquals("list", answer.body().get("object").asText());
            JsonNode results = answer.body().get("results");
            List<Integer> order = new ArrayList<>();
            for (JsonNode result : results) {
                int index = result.get("index").asInt();
                order.add(index);
                assertEquals(sameQuery.get(index).get("p_yes").asDouble(), result.get("relevance_score").asDouble(),
                        TOLERANCE, path + ": document " + index);
            }
            assertEquals(goldenOrder(), order, path + ": highest first");
            long tokens = sameQuery.stream().mapToLong(c -> c.get("ids").size()).sum();
            assertEquals(tokens, answer.body().get("usage").get("prompt_tokens").asLong(), "the prompts' tokens");
        }
    }

    @Test
    void topNKeepsTheBest() throws Exception {
        RetrievalTestServer.Answer answer = fixture.post("/v1/rerank", request("\"top_n\":1"));
        assertEquals(200, answer.status(), answer.body().toString());
        assertEquals(1, answer.body().get("results").size());
        assertEquals(goldenOrder().getFirst(), answer.body().get("results").get(0).get("index").asInt());
    }

    @Test
    void theInstructionIsThePromptsOwn() throws Exception {
        ObjectNode body = JSON.createObjectNode();
        body.put("query", otherInstruction.get("query").asText());
        body.put("instruction", otherInstruction.get("instruction").asText());
        body.putArray("documents").add(otherInstruction.get("document").asText());
        RetrievalTestServer.Answer answer = fixture.post("/v1/rerank", body.toString());
        assertEquals(200, answer.status(), answer.body().toString());
        assertEquals(otherInstruction.get("p_yes").asDouble(),
                answer.body().get("results").get(0).get("relevance_score").asDouble(), TOLERANCE);
        assertEquals(otherInstruction.get("ids").size(), answer.body().get("usage").get("prompt_tokens").asInt());
    }

    @Test
    void badRequestsAreFourHundredsNamingTheField() throws Exception {
        fixture.assertBad("/v1/rerank", "{\"documents\":[\"a\"]}", "query", "'query' is required");
        fixture.assertBad("/v1/rerank", "{\"query\":\"\",\"documents\":[\"a\"]}", "query", "empty string");
        fixture.assertBad("/v1/rerank", "{\"query\":\"q\"}", "documents", "'documents' is required");
        fixture.assertBad("/v1/rerank", "{\"query\":\"q\",\"documents\":[]}", "documents", "empty array");
        fixture.assertBad("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"a\",\"\"]}", "documents[1]", "empty string");
        fixture.assertBad("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"a\",{\"text\":\"b\"}]}", "documents[1]", "expected a string");
        fixture.assertBad("/v1/rerank", "{\"query\":\"q\",\"documents\":[" + "\"a\",".repeat(RerankRequest.MAX_DOCUMENTS) + "\"a\"]}",
                "documents", "more than the " + RerankRequest.MAX_DOCUMENTS);
        fixture.assertBad("/v1/rerank", request("\"top_n\":0"), "top_n", "at least 1");
        fixture.assertBad("/v1/rerank", request("\"instruction\":\"\""), "instruction", "empty string");
        fixture.assertBad("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"a\",\"" + "word ".repeat(300) + "\"]}", "documents",
                "document 1 makes a prompt of", "more than the context of " + RetrievalTestServer.CONTEXT);
    }

    @Test
    void embeddingsAndCompletionsAreRefusedNamingTheFlag() throws Exception {
        for (String path : List.of("/v1/embeddings", "/v1/chat/completions")) {
            RetrievalTestServer.Answer answer = fixture.post(path, "{\"input\":\"a\"}");
            assertEquals(501, answer.status(), path);
            assertTrue(answer.body().get("error").get("message").asText().contains("started with --rerank"),
                    answer.body().toString());
        }
    }
}
