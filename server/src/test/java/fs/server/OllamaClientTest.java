package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.ollama.OllamaChatModel;
import dev.langchain4j.model.ollama.OllamaModel;
import dev.langchain4j.model.ollama.OllamaModelCard;
import dev.langchain4j.model.ollama.OllamaStreamingChatModel;
import dev.langchain4j.model.output.FinishReason;
import fs.generate.Generator;
import fs.generate.StopReason;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Ollama's API on models/tiny-tied (one scheduler slot): through Ollama's official JavaScript client (npm ollama 0.6.4,
 * pinned in server/src/test/node/package.json), LangChain4j's Ollama chat models and model list (langchain4j-ollama
 * 1.18.1) and raw HTTP.
 * Greedy answers (temperature 0) equal the Generator's, whole and streamed, from /api/chat and /api/generate; the
 * model is described as the fixture describes it; errors are Ollama's {@code {"error": "..."}} with its statuses.
 */
class OllamaClientTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_TOKENS = 10;
    private static final String QUESTION = "Why is the sky blue?";
    private static final String RAW_PROMPT = "The sky is blue because";
    private static final String NAME = TestServer.MODEL_ID + ":latest";

    private static TestServer fixture;
    private static Generator.Generation chat;
    private static Generator.Generation raw;
    private static int chatPromptTokens;
    /** What the JavaScript client got, run once against the server (ollama-client.mjs answers). */
    private static JsonNode client;
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void start() throws Exception {
        fixture = TestServer.load(512);
        int[] prompt = fixture.chatPrompt(QUESTION, null);
        chatPromptTokens = prompt.length;
        chat = fixture.greedy(prompt, MAX_TOKENS);
        raw = fixture.greedy(fixture.tokenizer.encode(RAW_PROMPT), MAX_TOKENS);
        fixture.serve(fixture.schedulerEngine(1, 4), null);
        client = JSON.readTree(NodeClient.run("ollama-client.mjs", fixture.url(""), "answers", NAME, QUESTION,
                Integer.toString(MAX_TOKENS), RAW_PROMPT));
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static String text(Generator.Generation generation) {
        return fixture.text(generation.ids());
    }

    private static String doneReason(Generator.Generation generation) {
        return generation.stopReason() == StopReason.TOKEN_LIMIT ? "length" : "stop";
    }

    /** The last object of an answer: done, why, the counts and the durations in nanoseconds. */
    private static void assertLast(JsonNode last, Generator.Generation expected, int promptTokens) {
        assertTrue(last.get("done").asBoolean(), last.toString());
        assertEquals(doneReason(expected), last.get("done_reason").asText());
        assertEquals(promptTokens, last.get("prompt_eval_count").asInt());
        assertEquals(expected.ids().length, last.get("eval_count").asInt());
        assertTrue(last.get("total_duration").asLong() >= last.get("eval_duration").asLong(), last.toString());
        assertTrue(last.get("eval_duration").asLong() > 0, last.toString());
        assertEquals(0, last.get("load_duration").asLong());
        assertEquals(NAME, last.get("model").asText());
    }

    /** The pieces of a stream: all but the last not done; their text (chat: message.content) concatenated. */
    private static String streamed(JsonNode pieces, String field) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < pieces.size(); i++) {
            JsonNode piece = pieces.get(i);
            assertEquals(i == pieces.size() - 1, piece.get("done").asBoolean(), piece.toString());
            text.append(field.equals("message") ? piece.get("message").get("content").asText()
                    : piece.get(field).asText());
        }
        return text.toString();
    }

    @Test
    void theJavaScriptClientsChatIsTheGreedyAnswer() {
        JsonNode answer = client.get("chat");
        assertEquals("assistant", answer.get("message").get("role").asText());
        assertEquals(text(chat), answer.get("message").get("content").asText());
        assertLast(answer, chat, chatPromptTokens);
    }

    @Test
    void theJavaScriptClientsStreamedChatConcatenatesToTheGreedyAnswer() {
        JsonNode pieces = client.get("chatStream");
        assertTrue(pieces.size() > 2, "one object per piece of text: " + pieces);
        assertEquals(text(chat), streamed(pieces, "message"));
        assertLast(pieces.get(pieces.size() - 1), chat, chatPromptTokens);
    }

    @Test
    void generateAnswersThePromptAsAUserTurnOrRaw() {
        // A prompt without raw goes through the chat template as a user turn: the chat's answer.
        assertEquals(text(chat), client.get("generate").get("response").asText());
        assertLast(client.get("generate"), chat, chatPromptTokens);
        JsonNode pieces = client.get("generateStream");
        assertEquals(text(chat), streamed(pieces, "response"));
        assertEquals(text(raw), client.get("raw").get("response").asText());
        assertLast(client.get("raw"), raw, fixture.tokenizer.encode(RAW_PROMPT).length);
    }

    @Test
    void aSchemaFormatGivesJsonOfThatShape() throws Exception {
        JsonNode answer = client.get("format");
        JsonNode person = JSON.readTree(answer.get("message").get("content").asText());
        assertTrue(person.get("name").isTextual(), person.toString());
        assertTrue(person.get("name").asText().length() <= 8, person.toString());
        assertTrue(person.get("age").isIntegralNumber(), person.toString());
        assertEquals("stop", answer.get("done_reason").asText(), "the JSON ended well inside the limit");
    }

    @Test
    void tagsPsAndShowDescribeTheServedModel() {
        ModelDetails details = fixture.details();
        JsonNode tags = client.get("tags").get("models");
        assertEquals(1, tags.size());
        JsonNode entry = tags.get(0);
        assertEquals(NAME, entry.get("name").asText());
        assertEquals(NAME, entry.get("model").asText());
        assertEquals(details.bytes(), entry.get("size").asLong());
        assertTrue(entry.get("digest").asText().matches("[0-9a-f]{64}"), entry.toString());
        assertEquals(details.modified().toString(), entry.get("modified_at").asText());
        assertDetails(details, entry.get("details"));

        JsonNode running = client.get("ps").get("models").get(0);
        assertEquals(NAME, running.get("name").asText());
        assertEquals(entry.get("digest"), running.get("digest"));
        assertEquals(512, running.get("context_length").asInt());

        JsonNode show = client.get("show");
        assertDetails(details, show.get("details"));
        assertEquals(details.parameters(), show.get("model_info").get("general.parameter_count").asLong());
        assertEquals("qwen3", show.get("model_info").get("general.architecture").asText());
        assertEquals(512, show.get("model_info").get("qwen3.context_length").asInt());
        assertEquals(List.of("completion", "tools"), JSON.convertValue(show.get("capabilities"), List.class));
        assertEquals(OllamaModels.VERSION, client.get("version").get("version").asText());
    }

    private static void assertDetails(ModelDetails details, JsonNode node) {
        assertEquals("safetensors", node.get("format").asText());
        assertEquals("qwen3", node.get("family").asText());
        assertEquals(details.sizeLabel(), node.get("parameter_size").asText());
        assertEquals("BF16", node.get("quantization_level").asText());
    }

    @Test
    void theJavaScriptClientSeesOllamasErrors() {
        JsonNode unknown = client.get("unknownModel");
        assertEquals(404, unknown.get("status").asInt());
        assertTrue(unknown.get("message").asText().startsWith("model \"no-such-model\" not found, try pulling it "
                + "first"), unknown.toString());
        JsonNode context = client.get("tooLargeContext");
        assertEquals(400, context.get("status").asInt());
        assertTrue(context.get("message").asText().contains("options.num_ctx"), context.toString());
    }

    @Test
    void langChain4jsOllamaChatModelGetsTheGreedyAnswer() {
        ChatResponse response = OllamaChatModel.builder().baseUrl(fixture.url("")).modelName(NAME).temperature(0.0)
                .numPredict(MAX_TOKENS).timeout(Duration.ofSeconds(60)).maxRetries(0).build().chat(
                        dev.langchain4j.model.chat.request.ChatRequest.builder()
                                .messages(dev.langchain4j.data.message.UserMessage.from(QUESTION)).build());
        assertEquals(text(chat), response.aiMessage().text());
        assertEquals(chat.stopReason() == StopReason.TOKEN_LIMIT ? FinishReason.LENGTH : FinishReason.STOP,
                response.finishReason());
        assertEquals(chatPromptTokens, response.tokenUsage().inputTokenCount());
        assertEquals(chat.ids().length, response.tokenUsage().outputTokenCount());
    }

    @Test
    void langChain4jsOllamaStreamingChatModelStreamsTheGreedyAnswer() throws Exception {
        OllamaStreamingChatModel model = OllamaStreamingChatModel.builder().baseUrl(fixture.url("")).modelName(NAME)
                .temperature(0.0).numPredict(MAX_TOKENS).timeout(Duration.ofSeconds(60)).build();
        LangChain4jStream streamed = LangChain4jStream.of(model, QUESTION);
        List<String> partials = streamed.pieces();
        ChatResponse response = streamed.response();
        assertTrue(partials.size() > 1, "streamed in pieces: " + partials);
        assertEquals(text(chat), String.join("", partials));
        assertEquals(text(chat), response.aiMessage().text());
    }

    @Test
    void langChain4jsOllamaModelsListsAndDescribesTheServedModel() {
        dev.langchain4j.model.ollama.OllamaModels models = dev.langchain4j.model.ollama.OllamaModels.builder()
                .baseUrl(fixture.url("")).timeout(Duration.ofSeconds(60)).maxRetries(0).build();
        List<OllamaModel> available = models.availableModels().content();
        assertEquals(1, available.size());
        assertEquals(NAME, available.getFirst().getName());
        assertEquals(fixture.details().modified(), available.getFirst().getModifiedAt().toInstant());
        assertEquals("qwen3", available.getFirst().getDetails().getFamily());
        OllamaModelCard card = models.modelCard(NAME).content();
        assertEquals(fixture.details().sizeLabel(), card.getDetails().getParameterSize());
        assertTrue(card.getCapabilities().contains("tools"), card.getCapabilities().toString());
        assertEquals(NAME, models.runningModels().content().getFirst().getName());
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(fixture.url(path))).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A greedy chat request of the question, with {@code extra} fields. */
    private static String chatBody(String extra) {
        return chatBody("{\"temperature\":0,\"num_predict\":" + MAX_TOKENS + "}", extra);
    }

    private static String chatBody(String options, String extra) {
        return "{\"model\":\"" + NAME + "\",\"messages\":[{\"role\":\"user\",\"content\":\"" + QUESTION
                + "\"}],\"options\":" + options + extra + "}";
    }

    @Test
    void aStreamIsNewlineDelimitedJsonByDefault() throws Exception {
        HttpResponse<String> response = post("/api/chat", chatBody(""));
        assertEquals(200, response.statusCode(), response.body());
        assertEquals("application/x-ndjson", response.headers().firstValue("Content-Type").orElseThrow());
        assertTrue(response.body().endsWith("}\n"), response.body());
        String[] lines = response.body().split("\n", -1);
        assertEquals("", lines[lines.length - 1], "every object ends its line");
        JsonNode pieces = JSON.createArrayNode();
        for (int i = 0; i < lines.length - 1; i++) ((com.fasterxml.jackson.databind.node.ArrayNode) pieces)
                .add(JSON.readTree(lines[i]));
        assertEquals(text(chat), streamed(pieces, "message"));
        assertLast(pieces.get(pieces.size() - 1), chat, chatPromptTokens);

        HttpResponse<String> whole = post("/api/chat", chatBody(",\"stream\":false"));
        assertEquals("application/json", whole.headers().firstValue("Content-Type").orElseThrow());
        assertEquals(text(chat), JSON.readTree(whole.body()).get("message").get("content").asText());
    }

    @Test
    void anEmptyChatOrPromptLoadsTheModelNamedWithOrWithoutItsTag() throws Exception {
        for (String path : List.of("/api/chat", "/api/generate")) {
            for (String model : List.of(NAME, TestServer.MODEL_ID)) {
                HttpResponse<String> response = post(path, "{\"model\":\"" + model + "\"}");
                assertEquals(200, response.statusCode(), response.body());
                JsonNode answer = JSON.readTree(response.body());
                assertTrue(answer.get("done").asBoolean());
                assertEquals("load", answer.get("done_reason").asText());
                assertEquals(model, answer.get("model").asText(), "the model as the request named it");
            }
        }
    }

    /** An Ollama error: the status, and a body that is {"error": message} and nothing else. */
    private static String assertError(HttpResponse<String> response, int status, String fragment) throws Exception {
        assertEquals(status, response.statusCode(), response.body());
        JsonNode body = JSON.readTree(response.body());
        assertEquals(1, body.size(), response.body());
        String message = body.get("error").asText();
        assertTrue(message.contains(fragment), message);
        return message;
    }

    @Test
    void badRequestsAreOllamasErrors() throws Exception {
        assertEquals("model is required", assertError(post("/api/chat", "{\"messages\":[]}"), 400, ""));
        assertTrue(assertError(post("/api/generate", "{\"model\":\"llama3\",\"prompt\":\"hi\"}"), 404, "")
                .startsWith("model \"llama3\" not found, try pulling it first"));
        assertTrue(assertError(post("/api/show", "{\"model\":\"llama3\"}"), 404, "").startsWith("model \"llama3\""));
        assertError(post("/api/chat", chatBody("{\"temperature\":\"hot\"}", "")), 400, "options.temperature");
        assertError(post("/api/chat", chatBody("{\"num_predict\":0}", "")), 400, "options.num_predict");
        assertError(post("/api/chat", chatBody(",\"format\":\"xml\"")), 400, "'format'");
        assertError(post("/api/chat", chatBody(",\"think\":\"very\"")), 400, "'think'");
        assertError(post("/api/generate", "{\"model\":\"" + NAME + "\",\"prompt\":\"hi\",\"images\":"
                + "[\"aGk=\"]}"), 400, "text only");
        assertError(post("/api/generate", "{\"model\":\"" + NAME + "\",\"prompt\":\"hi\",\"suffix\":"
                + "\"end\"}"), 400, "suffix");
        assertError(post("/api/chat", "{\"model\":\"" + NAME + "\",\"messages\":[{\"role\":\"robot\","
                + "\"content\":\"hi\"}]}"), 400, "robot");
        assertError(post("/api/chat", "{not json"), 400, "JSON");
        assertError(post("/api/embed", "{\"model\":\"" + NAME + "\",\"input\":\"hi\"}"), 501, "--embedding");
        assertError(post("/api/pull", "{\"model\":\"llama3\"}"), 404, "/api/chat");
        assertError(http.send(HttpRequest.newBuilder(URI.create(fixture.url("/api/chat"))).GET().build(),
                HttpResponse.BodyHandlers.ofString()), 405, "POST");
        assertError(http.send(HttpRequest.newBuilder(URI.create(fixture.url("/api/chat")))
                .POST(HttpRequest.BodyPublishers.ofString(chatBody(""))).build(),
                HttpResponse.BodyHandlers.ofString()), 415, "application/json");
    }

    @Test
    void aForeignHostIsRefusedInOllamasShape() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", fixture.serverAddress().getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write("GET /api/tags HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(response.startsWith("HTTP/1.1 403"), response);
            JsonNode body = JSON.readTree(response.substring(response.indexOf("\r\n\r\n") + 4));
            assertTrue(body.get("error").asText().contains("Host"), response);
            assertFalse(body.has("type"), response);
        }
    }
}
