package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The HTTP layer byte by byte, with the JDK's HTTP client and raw sockets, on a scripted engine (no model runs):
 * error objects for every kind of bad request, the event-stream framing, authentication, the full queue, a client that
 * goes away, and shutdown.
 */
class RawHttpTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCRIPT = "Hello there, this is the scripted answer.";
    private static final String CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";

    private static TestServer fixture;
    private static ScriptedEngine engine;
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void start() {
        fixture = TestServer.load(64);
        engine = new ScriptedEngine(fixture.tokenizer.encode(SCRIPT), 0);
        fixture.serve(engine, null);
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static HttpResponse<String> post(TestServer server, String path, String body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url(path)))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) request.headers(headers);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(TestServer server, String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url(path))).timeout(Duration.ofSeconds(30));
        if (headers.length > 0) request.headers(headers);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The error object of a response, checked to have OpenAI's shape. */
    private static JsonNode error(HttpResponse<String> response) throws IOException {
        assertEquals("application/json", response.headers().firstValue("Content-Type").orElse(""));
        JsonNode error = JSON.readTree(response.body()).get("error");
        assertTrue(error != null && error.isObject(), response.body());
        assertTrue(error.get("message").isTextual() && !error.get("message").textValue().isBlank(), response.body());
        assertTrue(error.get("type").isTextual(), response.body());
        assertTrue(error.has("code"), response.body());
        assertFalse(response.body().contains("\tat "), "never a stack trace: " + response.body());
        return error;
    }

    @Test
    void malformedJsonIsA400AndTheServerServesOn() throws Exception {
        for (String body : List.of(CHAT, "", "[1,2]", "{\"messages\": [}", "{\"a\":1,\"a\":2}", "\u0000\u0001")) {
            HttpResponse<String> response = post(fixture, "/v1/chat/completions", body);
            assertEquals(400, response.statusCode(), body);
            assertEquals("invalid_json", error(response).get("code").textValue(), body);
        }
        HttpResponse<String> fine = post(fixture, "/v1/chat/completions", CHAT + "}");
        assertEquals(200, fine.statusCode());
        assertEquals(SCRIPT, JSON.readTree(fine.body()).at("/choices/0/message/content").textValue());
    }

    @Test
    void wrongTypesAndBadValuesNameTheField() throws Exception {
        String[][] cases = {
            {CHAT + ",\"temperature\":\"hot\"}", "temperature", "invalid_type"},
            {CHAT + ",\"max_tokens\":\"10\"}", "max_tokens", "invalid_type"},
            {"{\"messages\":[{\"role\":\"user\",\"content\":{}}]}", "messages[0].content", "invalid_type"},
            {CHAT + ",\"stop\":[1]}", "stop[0]", "invalid_type"},
            {CHAT + ",\"n\":3}", "n", "unsupported_value"},
            {CHAT + ",\"logprobs\":true,\"top_logprobs\":21}", "top_logprobs", "invalid_value"},
            {CHAT + ",\"top_logprobs\":2}", "top_logprobs", "invalid_value"},
            {CHAT + ",\"presence_penalty\":3}", "presence_penalty", "invalid_value"},
            {CHAT + ",\"model\":\"nope\"}", "model", "model_not_found"},
        };
        for (String[] c : cases) {
            HttpResponse<String> response = post(fixture, "/v1/chat/completions", c[0]);
            JsonNode error = error(response);
            assertEquals(c[1], error.get("param").textValue(), c[0]);
            assertEquals(c[2], error.get("code").textValue(), c[0]);
            assertEquals(c[2].equals("model_not_found") ? 404 : 400, response.statusCode(), c[0]);
        }
        HttpResponse<String> text = post(fixture, "/v1/completions", "{\"prompt\":5}");
        assertEquals("prompt", error(text).get("param").textValue());
    }

    @Test
    void aPromptLongerThanTheContextIsRefused() throws Exception {
        String longPrompt = " a".repeat(2 * engine.contextLength());
        HttpResponse<String> response = post(fixture, "/v1/completions", "{\"prompt\":\"" + longPrompt + "\"}");
        assertEquals(400, response.statusCode());
        JsonNode error = error(response);
        assertEquals("context_length_exceeded", error.get("code").textValue());
        assertTrue(error.get("message").textValue().contains("context of " + engine.contextLength()), response.body());
        HttpResponse<String> withMax = post(fixture, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":5000}");
        assertEquals("context_length_exceeded", error(withMax).get("code").textValue());
    }

    @Test
    void aBodyOverTheLimitIsRefusedWith413() throws Exception {
        // Declared too large: refused before the body is read.
        try (Socket socket = new Socket("127.0.0.1", port(fixture))) {
            socket.setSoTimeout(10_000);
            send(socket, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + (ApiServer.MAX_BODY_BYTES + 1) + "\r\n\r\n{");
            String response = readResponse(socket.getInputStream());
            assertTrue(response.startsWith("HTTP/1.1 413"), response);
            assertTrue(response.contains("\"code\":\"request_too_large\""), response);
        }
        // Chunked, with no length given: refused once the limit is passed.
        byte[] big = new byte[ApiServer.MAX_BODY_BYTES + 1];
        java.util.Arrays.fill(big, (byte) ' ');
        HttpRequest request = HttpRequest.newBuilder(URI.create(fixture.url("/v1/chat/completions")))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big))).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(413, response.statusCode());
        assertEquals("request_too_large", error(response).get("code").textValue());
        assertEquals(200, get(fixture, "/health").statusCode(), "and the server serves on");
    }

    @Test
    void aStreamIsFramedAsServerSentEvents() throws Exception {
        HttpResponse<String> response = post(fixture, "/v1/chat/completions",
                CHAT + ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertEquals(200, response.statusCode());
        assertEquals("text/event-stream; charset=utf-8", response.headers().firstValue("Content-Type").orElse(""));
        String body = response.body();
        assertTrue(body.endsWith("data: [DONE]\n\n"), body);
        String[] events = body.substring(0, body.length() - 2).split("\n\n", -1);
        List<JsonNode> chunks = new ArrayList<>();
        for (int i = 0; i < events.length - 1; i++) {
            assertTrue(events[i].startsWith("data: {") && !events[i].contains("\n"), "one data line: " + events[i]);
            chunks.add(JSON.readTree(events[i].substring("data: ".length())));
        }
        assertEquals("data: [DONE]", events[events.length - 1]);
        StringBuilder content = new StringBuilder();
        for (JsonNode chunk : chunks) {
            assertEquals("chat.completion.chunk", chunk.get("object").textValue());
            assertEquals(chunks.getFirst().get("id"), chunk.get("id"), "one id for the whole stream");
            JsonNode delta = chunk.at("/choices/0/delta/content");
            if (delta.isTextual()) content.append(delta.textValue());
        }
        assertEquals("assistant", chunks.getFirst().at("/choices/0/delta/role").textValue());
        assertEquals(SCRIPT, content.toString());
        JsonNode finish = chunks.get(chunks.size() - 2);
        assertEquals("stop", finish.at("/choices/0/finish_reason").textValue());
        JsonNode usage = chunks.getLast();
        assertEquals(0, usage.get("choices").size());
        assertEquals(fixture.tokenizer.encode(SCRIPT).length, usage.at("/usage/completion_tokens").intValue());
        for (int i = 1; i < chunks.size() - 2; i++) {
            assertTrue(chunks.get(i).at("/choices/0/finish_reason").isNull(), "only the last choice finishes");
        }
    }

    @Test
    void wholeAnswersAlwaysCarryUsage() throws Exception {
        HttpResponse<String> response = post(fixture, "/v1/completions", "{\"prompt\":\"Say it\",\"max_tokens\":3}");
        JsonNode answer = JSON.readTree(response.body());
        assertEquals("text_completion", answer.get("object").textValue());
        assertEquals("length", answer.at("/choices/0/finish_reason").textValue());
        assertEquals(3, answer.at("/usage/completion_tokens").intValue());
        assertEquals(fixture.tokenizer.encode("Say it").length, answer.at("/usage/prompt_tokens").intValue());
        assertEquals(answer.at("/usage/prompt_tokens").intValue() + 3, answer.at("/usage/total_tokens").intValue());
    }

    @Test
    void unknownPathsAndWrongMethodsGetErrorObjects() throws Exception {
        HttpResponse<String> missing = get(fixture, "/v1/images/generations");
        assertEquals(404, missing.statusCode());
        assertEquals("not_found", error(missing).get("code").textValue());
        HttpResponse<String> method = get(fixture, "/v1/chat/completions");
        assertEquals(405, method.statusCode());
        assertEquals("POST", method.headers().firstValue("Allow").orElse(""));
        assertEquals("method_not_allowed", error(method).get("code").textValue());
    }

    @Test
    void aFullQueueIs503WithRetryAfterAndCounted() throws Exception {
        engine.full.set(true);
        try {
            HttpResponse<String> response = post(fixture, "/v1/chat/completions", CHAT + "}");
            assertEquals(503, response.statusCode());
            assertEquals("1", response.headers().firstValue("Retry-After").orElse(""));
            assertEquals("server_error", error(response).get("type").textValue());
        } finally {
            engine.full.set(false);
        }
        HttpResponse<String> metrics = get(fixture, "/metrics");
        assertTrue(metrics.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        assertTrue(metrics.body().lines().anyMatch(line -> line.matches("fs_requests_rejected_total [1-9][0-9]*")),
                metrics.body());
        for (String name : List.of("fs_requests_total", "fs_tokens_predicted_total", "fs_predicted_tokens_seconds",
                "fs_requests_processing", "fs_requests_deferred", "fs_slots")) {
            assertTrue(metrics.body().contains("# TYPE " + name + " "), name);
            assertTrue(metrics.body().lines().anyMatch(line -> line.startsWith(name + " ")), name);
        }
    }

    @Test
    void aClientThatGoesAwayCancelsItsRequest() throws Exception {
        try (TestServer slow = TestServer.load(64)) {
            ScriptedEngine slowEngine = new ScriptedEngine(slow.tokenizer.encode(SCRIPT.repeat(50)), 20);
            slow.serve(slowEngine, null);
            try (Socket socket = new Socket("127.0.0.1", port(slow))) {
                String body = CHAT + ",\"stream\":true}";
                send(socket, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                        + "Content-Type: application/json\r\nContent-Length: "
                        + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body);
                InputStream in = socket.getInputStream();
                StringBuilder seen = new StringBuilder();
                while (!seen.toString().contains("\"content\":\"Hello")) seen.append((char) in.read());
            }
            assertTrue(slowEngine.cancelled.await(10, TimeUnit.SECONDS), "the engine was told to stop");
        }
    }

    @Test
    void shutdownCutsARunningStreamWithAnErrorEvent() throws Exception {
        try (TestServer slow = TestServer.load(64)) {
            ScriptedEngine slowEngine = new ScriptedEngine(slow.tokenizer.encode(SCRIPT.repeat(50)), 20);
            ApiServer server = slow.serve(slowEngine, null);
            HttpRequest request = HttpRequest.newBuilder(URI.create(slow.url("/v1/chat/completions")))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(CHAT + ",\"stream\":true}")).build();
            HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            InputStream in = response.body();
            in.read(); // the stream has started
            server.shutdown(Duration.ZERO);
            String rest = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rest.contains("data: {\"error\":{"), rest);
            assertTrue(rest.contains("\"code\":\"shutting_down\""), rest);
            assertFalse(rest.contains("[DONE]"), "a cut answer is not done");
            assertTrue(rest.endsWith("\n\n"), "the last event is whole");
        }
    }

    @Test
    void whileLoadingHealthAndCompletionsSay503() throws Exception {
        try (TestServer loading = TestServer.load(64)) {
            loading.listen(null);
            HttpResponse<String> health = get(loading, "/health");
            assertEquals(503, health.statusCode());
            assertEquals("loading model", JSON.readTree(health.body()).get("status").textValue());
            HttpResponse<String> chat = post(loading, "/v1/chat/completions", CHAT + "}");
            assertEquals(503, chat.statusCode());
            assertEquals("loading", error(chat).get("code").textValue());
        }
        assertEquals("{\"status\":\"ok\"}", get(fixture, "/health").body());
    }

    @Test
    void withAnApiKeyOnlyBearersOfItAreServed() throws Exception {
        try (TestServer guarded = TestServer.load(64)) {
            guarded.serve(new ScriptedEngine(guarded.tokenizer.encode(SCRIPT), 0), "s3cret");
            HttpResponse<String> none = post(guarded, "/v1/chat/completions", CHAT + "}");
            assertEquals(401, none.statusCode());
            assertEquals("invalid_api_key", error(none).get("code").textValue());
            assertEquals(401, get(guarded, "/v1/models", "Authorization", "Bearer s3cre").statusCode());
            assertEquals(401, get(guarded, "/metrics", "Authorization", "s3cret").statusCode());
            HttpResponse<String> ok = post(guarded, "/v1/chat/completions", CHAT + "}", "Authorization", "Bearer s3cret");
            assertEquals(200, ok.statusCode());
            assertEquals(200, get(guarded, "/health").statusCode(), "health needs no key (load balancers ask it)");
        }
    }

    private static int port(TestServer server) {
        return server.serverAddress().getPort();
    }

    private static void send(Socket socket, String text) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** One response with a Content-Length: its head and body (the server may keep the connection open). */
    private static String readResponse(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) throw new IOException("the response ended in its head: " + head);
            head.append((char) b);
        }
        java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (!length.find()) throw new IOException("no Content-Length: " + head);
        return head + new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8);
    }
}
