package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import fs.model.Golden;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * FsModel.embed and FsModel.rerank on the tiny Qwen3-Embedding and Qwen3-Reranker checkpoints against their float64
 * goldens, a rerank while a chat answers on the same model, and the errors a caller can make.
 */
class EmbeddingFsModelTest {
    private static final double TOLERANCE = 1e-3;

    private static FsModel load(String checkpoint) {
        return FsModel.load(Golden.modelDir(checkpoint).toString(), FsModel.Options.defaults().withBackend("java")
                .withThreads(2).withContextLength(256).withParallelSlots(2));
    }

    private static JsonNode cases(String checkpoint, String file) throws IOException {
        return new ObjectMapper().readTree(Golden.modelDir(checkpoint).resolve("golden").resolve(file).toFile())
                .get("cases");
    }

    @Test
    void embedsTextsQueriesAndTruncatedDimensionsAsTheReference() throws IOException {
        JsonNode cases = cases("tiny-embed-heldout", "embedding.json");
        try (FsModel model = load("tiny-embed-heldout")) {
            List<String> documents = List.of(cases.get(0).get("text").asText(), cases.get(1).get("text").asText(),
                    cases.get(3).get("text").asText());
            List<Embedding> embedded = model.embed(documents, EmbedParams.defaults());
            int[] golden = {0, 1, 3};
            for (int i = 0; i < golden.length; i++) {
                JsonNode expected = cases.get(golden[i]);
                assertEquals(i, embedded.get(i).index());
                assertEquals(expected.get("ids").size(), embedded.get(i).tokens());
                assertVector(expected.get("vector"), embedded.get(i).vector(), "document " + i);
            }
            String query = cases.get(2).get("text").asText();
            String task = query.substring("Instruct: ".length(), query.indexOf("\nQuery:"));
            Embedding asQuery = model.embed(List.of(query.substring(query.indexOf("\nQuery:") + 7)),
                    EmbedParams.defaults().withQueryTask(task).withDimensions(8)).getFirst();
            assertVector(cases.get(2).get("truncated"), asQuery.vector(), "query truncated to 8");

            int[] ids = new int[cases.get(1).get("ids").size()];
            for (int i = 0; i < ids.length; i++) ids[i] = cases.get(1).get("ids").get(i).asInt();
            assertVector(cases.get(1).get("vector"),
                    model.embedTokens(List.of(ids), EmbedParams.defaults()).getFirst().vector(), "token ids");

            assertTrue(assertThrows(FsException.class, () -> model.embed(List.of("a", ""), EmbedParams.defaults()))
                    .getMessage().contains("input 1 is empty"));
            assertTrue(assertThrows(FsException.class, () -> model.embed(List.of(), EmbedParams.defaults()))
                    .getMessage().contains("no input"));
            assertTrue(assertThrows(FsException.class, () -> model.rerank("q", List.of("d"), RerankParams.defaults()))
                    .getMessage().contains("is an embedding model"));
            assertTrue(assertThrows(FsException.class, () -> model.newChat(ChatParams.defaults()))
                    .getMessage().contains("is an embedding model"));
            String tooLong = "word ".repeat(300);
            assertTrue(assertThrows(FsException.class, () -> model.embed(List.of("a", tooLong), EmbedParams.defaults()))
                    .getMessage().startsWith("input 1 has "));
            assertEquals(128, model.embed(List.of(tooLong), EmbedParams.defaults().withTruncate(true)).getFirst()
                    .tokens(), "the context a chat has: 256 over 2 slots");
        }
    }

    @Test
    void reranksAsTheReferenceWhileAChatAnswers() throws Exception {
        JsonNode cases = cases("tiny-rerank", "rerank.json");
        try (FsModel model = load("tiny-rerank")) {
            List<String> documents = new ArrayList<>();
            for (int i = 0; i < 3; i++) documents.add(cases.get(i).get("document").asText());
            CompletableFuture<Reply> answering;
            try (Chat chat = model.newChat(ChatParams.defaults().withTemperature(0).withMaxTokens(40))) {
                answering = CompletableFuture.supplyAsync(() -> chat.send("Say something.", text -> {}));
                List<Ranked> ranked = model.rerank(cases.get(0).get("query").asText(), documents,
                        RerankParams.defaults());
                assertEquals(3, ranked.size());
                for (int i = 0; i < ranked.size(); i++) {
                    Ranked r = ranked.get(i);
                    assertEquals(cases.get(r.index()).get("p_yes").asDouble(), r.relevance(), TOLERANCE);
                    if (i > 0) assertTrue(r.relevance() <= ranked.get(i - 1).relevance(), "highest first");
                }
                assertTrue(answering.get().generatedTokens() > 0);
            }
            JsonNode other = cases.get(3);
            List<Ranked> best = model.rerank(other.get("query").asText(), List.of(other.get("document").asText()),
                    RerankParams.defaults().withInstruction(other.get("instruction").asText()).withTopN(1));
            assertEquals(other.get("p_yes").asDouble(), best.getFirst().relevance(), TOLERANCE);
            assertTrue(assertThrows(FsException.class, () -> model.embed(List.of("a"), EmbedParams.defaults()))
                    .getMessage().contains("is not an embedding model"));
            assertTrue(assertThrows(FsException.class, () -> model.rerank("", List.of("d"), RerankParams.defaults()))
                    .getMessage().contains("the query is empty"));
        }
    }

    private static void assertVector(JsonNode expected, float[] actual, String what) {
        assertEquals(expected.size(), actual.length, what);
        for (int i = 0; i < actual.length; i++) {
            assertEquals(expected.get(i).asDouble(), actual[i], TOLERANCE, what + " entry " + i);
        }
    }
}
