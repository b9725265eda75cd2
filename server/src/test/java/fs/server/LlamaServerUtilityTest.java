package fs.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.chat.ChatMessage;
import fs.generate.SamplingParams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
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
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * llama-server's utility endpoints over raw HTTP against a live server on models/tiny-tied's tokenizer and template,
 * with the scheduler fs serve runs (two slots): /tokenize and /detokenize against the tokenizer, /apply-template
 * against the chat template, /props and /slots against the engine, and every bad input a 400 naming its field.
 */
class LlamaServerUtilityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CONTEXT = 128;
    private static final String TEXT = "Hello, world! <|im_start|>user\nnaïve 日本 𝄞 done";
    private static final String WEATHER_TOOL = "{\"type\":\"function\",\"function\":{\"name\":\"weather\","
            + "\"description\":\"The weather in a city\",\"parameters\":{\"type\":\"object\",\"properties\":"
            + "{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}";

    private static TestServer fixture;
    private static SchedulerEngine engine;
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void start() {
        fixture = TestServer.load(CONTEXT);
        engine = fixture.schedulerEngine(2, 4);
        fixture.serve(engine, null);
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(fixture.url(path))).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(fixture.url(path))).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode ok(HttpResponse<String> response) throws IOException {
        assertEquals(200, response.statusCode(), response.body());
        assertEquals("application/json", response.headers().firstValue("Content-Type").orElse(""));
        return JSON.readTree(response.body());
    }

    /** The error object of a 400, in OpenAI's shape, naming {@code param}. */
    private static JsonNode badRequest(HttpResponse<String> response, String param) throws IOException {
        assertEquals(400, response.statusCode(), response.body());
        JsonNode error = JSON.readTree(response.body()).get("error");
        assertEquals("invalid_request_error", error.get("type").textValue(), response.body());
        assertEquals(param, error.get("param").textValue(), response.body());
        assertFalse(error.get("message").textValue().isBlank(), response.body());
        return error;
    }

    private static String body(Map<String, Object> fields) throws IOException {
        return JSON.writeValueAsString(fields);
    }

    @Test
    void tokenizeAndDetokenizeRoundTripThroughTheTokenizer() throws Exception {
        JsonNode tokens = ok(post("/tokenize", body(Map.of("content", TEXT, "add_special", true)))).get("tokens");
        int[] expected = fixture.tokenizer.encode(TEXT);
        assertArrayEquals(expected, JSON.treeToValue(tokens, int[].class));
        assertTrue(List.of(JSON.treeToValue(tokens, Integer[].class)).contains(
                fixture.tokenizer.tokenId("<|im_start|>").orElseThrow()), "a special token's text is that token");
        JsonNode content = ok(post("/detokenize", JSON.writeValueAsString(Map.of("tokens", tokens)))).get("content");
        assertEquals(TEXT, content.textValue());
    }

    @Test
    void aBodyOfManyReadsIsReadWhole() throws Exception {
        String text = "Many words, read in many pieces. ".repeat(8_000); // 264 kB: many reads of the socket
        JsonNode tokens = ok(post("/tokenize", body(Map.of("content", text)))).get("tokens");
        assertArrayEquals(fixture.tokenizer.encode(text), JSON.treeToValue(tokens, int[].class));
    }

    @Test
    void piecesAreTextOrTheBytesOfPartCharacters() throws Exception {
        JsonNode tokens = ok(post("/tokenize", body(Map.of("content", TEXT, "with_pieces", true)))).get("tokens");
        int[] expected = fixture.tokenizer.encode(TEXT);
        assertEquals(expected.length, tokens.size());
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        boolean bytePieces = false;
        for (int i = 0; i < expected.length; i++) {
            JsonNode token = tokens.get(i);
            assertEquals(expected[i], token.get("id").intValue());
            JsonNode piece = token.get("piece");
            byte[] bytes;
            if (piece.isTextual()) {
                bytes = piece.textValue().getBytes(StandardCharsets.UTF_8);
            } else { // 𝄞 is two tokens, neither a whole character
                bytePieces = true;
                bytes = new byte[piece.size()];
                for (int b = 0; b < bytes.length; b++) bytes[b] = (byte) piece.get(b).intValue();
            }
            assertArrayEquals(fixture.tokenizer.tokenBytes(expected[i]), bytes, token.toString());
            joined.writeBytes(bytes);
        }
        assertTrue(bytePieces, tokens.toString());
        assertEquals(TEXT, joined.toString(StandardCharsets.UTF_8));
    }

    @Test
    void applyTemplateIsTheChatTemplatesTextForTheSameRequest() throws Exception {
        String messages = "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"},"
                + "{\"role\":\"assistant\",\"content\":\"Hello.\"},{\"role\":\"user\",\"content\":\"Weather?\"}]";
        List<ChatMessage> chat = List.of(ChatMessage.system("Be brief."), new ChatMessage("user", "Hi"),
                new ChatMessage("assistant", "Hello."), new ChatMessage("user", "Weather?"));
        assertEquals(fixture.template.render(chat, true, null),
                ok(post("/apply-template", "{\"messages\":" + messages + "}")).get("prompt").textValue());
        assertEquals(fixture.template.render(chat, List.of(JSON.readTree(WEATHER_TOOL)), true, false),
                ok(post("/apply-template", "{\"messages\":" + messages + ",\"tools\":[" + WEATHER_TOOL + "],"
                        + "\"chat_template_kwargs\":{\"enable_thinking\":false}}")).get("prompt").textValue());
        assertEquals(fixture.template.render(chat, true, false), ok(post("/apply-template",
                "{\"messages\":" + messages + ",\"enable_thinking\":false}")).get("prompt").textValue());
    }

    @Test
    void propsSayWhatTheServerServes() throws Exception {
        JsonNode props = ok(get("/props"));
        JsonNode settings = props.get("default_generation_settings");
        assertEquals(CONTEXT, settings.get("n_ctx").intValue());
        assertEquals(engine.contextLength(), settings.get("n_ctx").intValue());
        SamplingParams defaults = SamplingParams.of(fixture.generationConfig); // generation_config.json's
        assertEquals(defaults.temperature(), settings.at("/params/temperature").floatValue());
        assertEquals(defaults.topK(), settings.at("/params/top_k").intValue());
        assertEquals(defaults.topP(), settings.at("/params/top_p").floatValue());
        assertEquals(2, props.get("total_slots").intValue());
        assertEquals(TestServer.MODEL_ID, props.get("model_path").textValue());
        assertEquals(fixture.template.jinja(), props.get("chat_template").textValue());
        assertFalse(props.at("/modalities/vision").booleanValue());
        assertTrue(props.get("build_info").textValue().startsWith("fs "), props.toString());
    }

    @Test
    void slotsListEachSlotReadOnly() throws Exception {
        JsonNode slots = ok(get("/slots"));
        assertEquals(2, slots.size(), slots.toString());
        for (int id = 0; id < 2; id++) {
            assertEquals(id, slots.get(id).get("id").intValue());
            assertEquals(CONTEXT, slots.get(id).get("n_ctx").intValue());
            assertFalse(slots.get(id).get("is_processing").booleanValue(), "idle: nothing was submitted");
        }
        assertEquals(405, post("/slots", "{}").statusCode(), "read-only");
        assertEquals(405, post("/props", "{}").statusCode(), "read-only");
    }

    @Test
    void badInputIsA400NamingItsField() throws Exception {
        badRequest(post("/tokenize", "{}"), "content");
        badRequest(post("/tokenize", "{\"content\":5}"), "content");
        badRequest(post("/tokenize", "{\"content\":\"a\",\"with_pieces\":\"yes\"}"), "with_pieces");
        badRequest(post("/tokenize", "{\"content\":\"a\",\"parse_special\":false}"), "parse_special");
        badRequest(post("/detokenize", "{}"), "tokens");
        badRequest(post("/detokenize", "{\"tokens\":\"abc\"}"), "tokens");
        badRequest(post("/detokenize", "{\"tokens\":[1,2.5]}"), "tokens");
        int vocab = fixture.tokenizer.vocabSize();
        String message = badRequest(post("/detokenize", "{\"tokens\":[1," + vocab + ",-3,2]}"), "tokens")
                .get("message").textValue();
        assertTrue(message.contains(vocab + ", -3") && message.contains("0.." + (vocab - 1)), message);
        badRequest(post("/apply-template", "{}"), "messages");
        badRequest(post("/apply-template", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                + "\"enable_thinking\":\"no\"}"), "enable_thinking");
        badRequest(post("/tokenize", "{\"content\":"), null);
        assertEquals(405, get("/tokenize").statusCode());
        HttpResponse<String> text = http.send(HttpRequest.newBuilder(URI.create(fixture.url("/tokenize")))
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(415, text.statusCode(), text.body());
    }

    @Test
    void theGuardsOfEveryRouteHold() throws Exception {
        for (String request : List.of("GET /props HTTP/1.1\r\nHost: evil.example\r\n\r\n",
                "POST /tokenize HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 15\r\n\r\n{\"content\":\"a\"}")) {
            try (Socket socket = new Socket("127.0.0.1", fixture.serverAddress().getPort())) {
                socket.setSoTimeout(30_000);
                OutputStream out = socket.getOutputStream();
                out.write(request.getBytes(StandardCharsets.UTF_8));
                out.flush();
                InputStream in = socket.getInputStream();
                String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
                assertEquals("HTTP/1.1 403", status, request);
            }
        }
        try (TestServer keyed = TestServer.load(64)) {
            keyed.serve(new ScriptedEngine(new int[] {1}, 0), "secret");
            HttpRequest.Builder props = HttpRequest.newBuilder(URI.create(keyed.url("/props")));
            assertEquals(401, http.send(props.build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(200, http.send(props.header("Authorization", "Bearer secret").build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
        }
    }
}
