package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.ollama.OllamaEmbeddingModel;
import dev.langchain4j.model.openai.OpenAiEmbeddingModel;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/embeddings} on models/tiny-embed-heldout served as {@code fs serve --embedding} serves it, through
 * the official OpenAI Java SDK, LangChain4j's OpenAI embedding model and raw HTTP: the vectors equal the float64
 * reference's (texts, token ids, base64, cut dimensions), and every bad request is a 400 naming its field. Ollama's
 * {@code /api/embed} and {@code /api/embeddings} through its JavaScript client and LangChain4j's Ollama embedding
 * model (langchain4j-ollama 1.18.1) give the same vectors.
 */
class EmbeddingServerTest {
    private static final String CHECKPOINT = "tiny-embed-heldout";
    /** The logit goldens' tolerance, for each entry of a unit vector. */
    private static final double TOLERANCE = 1e-3;
    private static final double MIN_COSINE = 0.99999;

    private static RetrievalTestServer fixture;
    private static OpenAIClient client;
    private static JsonNode cases;
    private static int goldenDimensions;
    private static final List<String> texts = new ArrayList<>();
    private static long goldenTokens;

    @BeforeAll
    static void start() throws Exception {
        fixture = RetrievalTestServer.start(CHECKPOINT, ServedTask.EMBEDDING);
        JsonNode golden = fixture.golden("embedding.json");
        cases = golden.get("cases");
        goldenDimensions = golden.get("dimensions").asInt();
        for (JsonNode c : cases) {
            texts.add(c.get("text").asText()); // a query is already in the card's instruct form
            goldenTokens += c.get("ids").size();
        }
        client = OpenAIOkHttpClient.builder().baseUrl(fixture.url("/v1")).apiKey("unused").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) client.close();
        if (fixture != null) fixture.close();
    }

    @Test
    void theSdksFloatVectorsAreTheReferences() {
        CreateEmbeddingResponse response = client.embeddings().create(EmbeddingCreateParams.builder()
                .model(CHECKPOINT).inputOfArrayOfStrings(texts)
                .encodingFormat(EmbeddingCreateParams.EncodingFormat.FLOAT).build());
        assertEquals(CHECKPOINT, response.model());
        assertEquals(texts.size(), response.data().size());
        for (int i = 0; i < texts.size(); i++) {
            assertEquals(i, response.data().get(i).index());
            assertMatches(cases.get(i).get("vector"), floats(response.data().get(i).embedding()), "text " + i);
        }
        assertEquals(goldenTokens, response.usage().promptTokens(), "each text's ids, the appended token included");
        assertEquals(goldenTokens, response.usage().totalTokens());
    }

    @Test
    void base64CarriesTheSameFloatsAndDimensionsCutThem() {
        CreateEmbeddingResponse response = client.embeddings().create(EmbeddingCreateParams.builder()
                .model(CHECKPOINT).inputOfArrayOfStrings(texts).dimensions(goldenDimensions)
                .encodingFormat(EmbeddingCreateParams.EncodingFormat.BASE64).build());
        for (int i = 0; i < texts.size(); i++) {
            String base64 = response.data().get(i).embeddingValue().asBase64();
            assertMatches(cases.get(i).get("truncated"), decode(base64), "text " + i + " cut, in base64");
        }
    }

    @Test
    void tokenIdsAreEmbeddedAsGiven() {
        List<List<Long>> lists = new ArrayList<>();
        for (JsonNode c : cases) lists.add(ids(c));
        CreateEmbeddingResponse many = client.embeddings().create(EmbeddingCreateParams.builder().model(CHECKPOINT)
                .inputOfArrayOfTokenArrays(lists).build());
        for (int i = 0; i < lists.size(); i++) {
            assertMatches(cases.get(i).get("vector"), vector(many.data().get(i)), "token ids " + i);
        }
        CreateEmbeddingResponse one = client.embeddings().create(EmbeddingCreateParams.builder().model(CHECKPOINT)
                .inputOfArrayOfTokens(lists.get(1)).build());
        assertEquals(1, one.data().size());
        assertMatches(cases.get(1).get("vector"), vector(one.data().getFirst()), "one token id list");
        assertEquals(lists.get(1).size(), one.usage().promptTokens(), "token ids get no appended token");
    }

    @Test
    void langChain4jsOpenAiEmbeddingModelGetsTheReferences() {
        OpenAiEmbeddingModel model = OpenAiEmbeddingModel.builder().baseUrl(fixture.url("/v1")).apiKey("unused")
                .modelName(CHECKPOINT).maxRetries(0).timeout(Duration.ofSeconds(60)).build();
        List<Embedding> embeddings = model.embedAll(texts.stream().map(TextSegment::from).toList()).content();
        assertEquals(texts.size(), embeddings.size());
        for (int i = 0; i < texts.size(); i++) {
            assertMatches(cases.get(i).get("vector"), embeddings.get(i).vector(), "LangChain4j text " + i);
        }
    }

    @Test
    void theAliasAnswersAsV1() throws Exception {
        RetrievalTestServer.Answer answer = fixture.post("/embeddings", "{\"input\":\"" + texts.get(0) + "\"}");
        assertEquals(200, answer.status(), answer.body().toString());
        assertEquals("list", answer.body().get("object").asText());
        assertEquals("embedding", answer.body().get("data").get(0).get("object").asText());
        assertMatches(cases.get(0).get("vector"), floats(answer.body().get("data").get(0).get("embedding")), "alias");
    }

    @Test
    void badRequestsAreFourHundredsNamingTheField() throws Exception {
        fixture.assertBad("/v1/embeddings", "{}", "input", "'input' is required");
        fixture.assertBad("/v1/embeddings", "{\"input\":\"\"}", "input", "empty string");
        fixture.assertBad("/v1/embeddings", "{\"input\":[]}", "input", "empty array");
        fixture.assertBad("/v1/embeddings", "{\"input\":[\"a\",\"\"]}", "input[1]", "empty string");
        fixture.assertBad("/v1/embeddings", "{\"input\":[\"a\",3]}", "input[1]", "expected a string");
        fixture.assertBad("/v1/embeddings", "{\"input\":[[1,2],[]]}", "input[1]", "empty array of token ids");
        fixture.assertBad("/v1/embeddings", "{\"input\":[" + "\"a\",".repeat(EmbeddingRequest.MAX_INPUTS) + "\"a\"]}", "input",
                "more than the " + EmbeddingRequest.MAX_INPUTS);
        fixture.assertBad("/v1/embeddings", "{\"input\":\"a\",\"encoding_format\":\"int8\"}", "encoding_format", "\"float\" or \"base64\"");
        fixture.assertBad("/v1/embeddings", "{\"input\":\"a\",\"dimensions\":-1}", "dimensions", "at least 1");
        fixture.assertBad("/v1/embeddings", "{\"input\":\"a\",\"dimensions\":25}", "dimensions", "at most 24");
        fixture.assertBad("/v1/embeddings", "{\"input\":[1,2,151936]}", "input", "token id 151936 is outside the vocabulary");
        fixture.assertBad("/v1/embeddings", "{\"input\":[\"a\",\"" + "word ".repeat(300) + "\"]}", "input",
                "input 1 has ", "more than the context of " + RetrievalTestServer.CONTEXT);

        RetrievalTestServer.Answer truncated = fixture.post("/v1/embeddings",
                "{\"input\":\"" + "word ".repeat(300) + "\",\"truncate\":true}");
        assertEquals(200, truncated.status(), truncated.body().toString());
        assertEquals(RetrievalTestServer.CONTEXT, truncated.body().get("usage").get("prompt_tokens").asInt());

        RetrievalTestServer.Answer otherModel = fixture.post("/v1/embeddings", "{\"input\":\"a\",\"model\":\"x\"}");
        assertEquals(404, otherModel.status());
        assertEquals("model", otherModel.body().get("error").get("param").asText());
    }

    @Test
    void completionsAndRerankingAreRefusedNamingTheFlag() throws Exception {
        for (String path : List.of("/v1/chat/completions", "/v1/completions", "/v1/rerank")) {
            RetrievalTestServer.Answer answer = fixture.post(path, "{\"prompt\":\"a\"}");
            assertEquals(501, answer.status(), path);
            String message = answer.body().get("error").get("message").asText();
            assertTrue(message.contains("started with --embedding"), message);
            assertEquals("not_supported_error", answer.body().get("error").get("type").asText());
        }
    }

    @Test
    void aChatServerRefusesEmbeddingsNamingTheFlag() throws Exception {
        try (TestServer chat = TestServer.load(64)) {
            chat.serve(new ScriptedEngine(new int[] {1}, 0), null);
            java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(chat.url("/v1/embeddings")))
                            .header("Content-Type", "application/json")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"input\":\"a\"}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(501, response.statusCode(), response.body());
            assertTrue(response.body().contains("start fs serve with --embedding"), response.body());
        }
    }

    @Test
    void ollamasJavaScriptClientEmbedsAsTheReferences() throws Exception {
        // Ollama's official JavaScript client, npm ollama 0.6.4 (pinned in server/src/test/node/package.json).
        JsonNode out = new ObjectMapper().readTree(NodeClient.run("ollama-client.mjs", fixture.url(""), "embed",
                CHECKPOINT, new ObjectMapper().writeValueAsString(texts)));
        JsonNode embed = out.get("embed");
        assertEquals(CHECKPOINT, embed.get("model").asText());
        assertEquals(texts.size(), embed.get("embeddings").size());
        for (int i = 0; i < texts.size(); i++) {
            assertMatches(cases.get(i).get("vector"), floats(embed.get("embeddings").get(i)), "/api/embed " + i);
        }
        assertEquals(goldenTokens, embed.get("prompt_eval_count").asLong());
        // The older /api/embeddings answers the vector unnormalized, as Ollama does: its direction is the reference.
        float[] legacy = floats(out.get("embeddings").get("embedding"));
        double norm = 0;
        for (float v : legacy) norm += (double) v * v;
        assertTrue(Math.abs(Math.sqrt(norm) - 1) > 1e-3, "not normalized: norm " + Math.sqrt(norm));
        for (int i = 0; i < legacy.length; i++) legacy[i] /= (float) Math.sqrt(norm);
        assertMatches(cases.get(0).get("vector"), legacy, "/api/embeddings");
        assertEquals(List.of("embedding"), new ObjectMapper().convertValue(out.get("show").get("capabilities"),
                List.class));
    }

    @Test
    void langChain4jsOllamaEmbeddingModelGetsTheReferences() {
        OllamaEmbeddingModel model = OllamaEmbeddingModel.builder().baseUrl(fixture.url("")).modelName(CHECKPOINT)
                .maxRetries(0).timeout(Duration.ofSeconds(60)).build();
        List<Embedding> embeddings = model.embedAll(texts.stream().map(TextSegment::from).toList()).content();
        assertEquals(texts.size(), embeddings.size());
        for (int i = 0; i < texts.size(); i++) {
            assertMatches(cases.get(i).get("vector"), embeddings.get(i).vector(), "LangChain4j Ollama text " + i);
        }
    }

    @Test
    void ollamasRoutesAnswerOllamasErrors() throws Exception {
        RetrievalTestServer.Answer chat = fixture.post("/api/chat", "{\"model\":\"" + CHECKPOINT + "\","
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(501, chat.status());
        assertTrue(chat.body().get("error").asText().contains("started with --embedding"), chat.body().toString());
        RetrievalTestServer.Answer other = fixture.post("/api/embed", "{\"model\":\"x\",\"input\":\"a\"}");
        assertEquals(404, other.status());
        assertTrue(other.body().get("error").asText().startsWith("model \"x\" not found"), other.body().toString());
        RetrievalTestServer.Answer none = fixture.post("/api/embed", "{\"model\":\"" + CHECKPOINT + "\"}");
        assertEquals(400, none.status());
        assertEquals("input is required", none.body().get("error").asText());
        RetrievalTestServer.Answer tooLong = fixture.post("/api/embed", "{\"model\":\"" + CHECKPOINT + "\","
                + "\"input\":\"" + "word ".repeat(300) + "\",\"truncate\":false}");
        assertEquals(400, tooLong.status());
        assertTrue(tooLong.body().get("error").asText().contains("more than the context"), tooLong.body().toString());
        RetrievalTestServer.Answer truncated = fixture.post("/api/embed", "{\"model\":\"" + CHECKPOINT + "\","
                + "\"input\":\"" + "word ".repeat(300) + "\"}");
        assertEquals(200, truncated.status(), "Ollama truncates by default: " + truncated.body());
        assertEquals(RetrievalTestServer.CONTEXT, truncated.body().get("prompt_eval_count").asInt());
    }

    private static void assertMatches(JsonNode expected, float[] actual, String what) {
        assertEquals(expected.size(), actual.length, what + ": length");
        double dot = 0, norm = 0, normExpected = 0;
        for (int i = 0; i < actual.length; i++) {
            double e = expected.get(i).asDouble();
            assertEquals(e, actual[i], TOLERANCE, what + ": entry " + i);
            dot += e * actual[i];
            norm += (double) actual[i] * actual[i];
            normExpected += e * e;
        }
        double cosine = dot / Math.sqrt(norm * normExpected);
        assertTrue(cosine >= MIN_COSINE, what + ": cosine " + cosine);
    }

    private static float[] vector(com.openai.models.embeddings.Embedding embedding) {
        return embedding.embeddingValue().isBase64() ? decode(embedding.embeddingValue().asBase64())
                : floats(embedding.embedding());
    }

    private static float[] floats(List<Float> values) {
        float[] vector = new float[values.size()];
        for (int i = 0; i < vector.length; i++) vector[i] = values.get(i);
        return vector;
    }

    private static float[] floats(JsonNode values) {
        float[] vector = new float[values.size()];
        for (int i = 0; i < vector.length; i++) vector[i] = values.get(i).floatValue();
        return vector;
    }

    /** OpenAI's base64: little-endian float32 bytes. */
    private static float[] decode(String base64) {
        ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(base64)).order(ByteOrder.LITTLE_ENDIAN);
        float[] vector = new float[bytes.remaining() / Float.BYTES];
        bytes.asFloatBuffer().get(vector);
        return vector;
    }

    private static List<Long> ids(JsonNode c) {
        List<Long> ids = new ArrayList<>();
        for (JsonNode id : c.get("ids")) ids.add(id.asLong());
        return ids;
    }
}
