package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * fs serve as a server one can expose, byte by byte over raw sockets on a scripted engine: abandoned requests,
 * slow and stalled clients, broken HTTP, log forgery and cross-site requests. Each test is one way a careless or
 * hostile client could hold a slot, hang a connection, get no answer or an HTML one, or write into the log.
 */
class ExposedServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCRIPT = "Hello there, this is the scripted answer.";
    private static final String CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String STREAMED_CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"stream\":true}";
    /** Short enough for a test to see each timeout pass, long enough for a loaded machine to send a request. */
    private static final ServerConfig.Timeouts SHORT = new ServerConfig.Timeouts(Duration.ofSeconds(2),
            Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofSeconds(2));

    private static TestServer fixture;

    @BeforeAll
    static void start() {
        fixture = TestServer.load(64);
        fixture.serveWith(new ScriptedEngine(fixture.tokenizer.encode(SCRIPT), 0), config(List.of(), List.of(), false));
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static ServerConfig config(List<String> allowedHosts, List<String> cors, boolean jsonLog) {
        return new ServerConfig("127.0.0.1", 0, null, allowedHosts, cors, SHORT, jsonLog);
    }

    /** A response as read off the socket: status, headers (lower-case names) and body. */
    private record Answer(int status, Map<String, String> headers, String body) {
        /** The error object, checked to be OpenAI's shape, as JSON (never an HTML page). */
        JsonNode error() throws IOException {
            assertEquals("application/json", headers.get("content-type"), body);
            JsonNode error = JSON.readTree(body).get("error");
            assertTrue(error != null && error.isObject(), body);
            assertTrue(error.get("message").isTextual() && !error.get("message").textValue().isBlank(), body);
            assertTrue(error.get("type").isTextual() && error.has("param") && error.get("code").isTextual(), body);
            return error;
        }
    }

    private static Socket connect(TestServer server) throws IOException {
        Socket socket = new Socket("127.0.0.1", server.serverAddress().getPort());
        socket.setSoTimeout(60_000); // far beyond every timeout here: reaching it means no answer came
        return socket;
    }

    private static void send(Socket socket, String text) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static String post(String path, String contentType, String body, String... headers) {
        StringBuilder request = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: localhost\r\n");
        if (contentType != null) request.append("Content-Type: ").append(contentType).append("\r\n");
        for (String header : headers) request.append(header).append("\r\n");
        return request.append("Content-Length: ").append(body.getBytes(StandardCharsets.UTF_8).length)
                .append("\r\n\r\n").append(body).toString();
    }

    /** One response, whose body has a Content-Length (or is chunked), read off the socket. */
    private static Answer read(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) throw new IOException("the connection closed without a whole response: " + head);
            head.append((char) b);
        }
        String[] lines = head.toString().split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> headers = new TreeMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.put(lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).strip());
        }
        byte[] body;
        if (headers.containsKey("content-length")) {
            body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
        } else if ("chunked".equals(headers.get("transfer-encoding"))) {
            java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
            while (true) {
                StringBuilder size = new StringBuilder();
                while (!size.toString().endsWith("\r\n")) size.append((char) in.read());
                int n = Integer.parseInt(size.toString().strip(), 16);
                all.write(in.readNBytes(n));
                in.readNBytes(2);
                if (n == 0) break;
            }
            body = all.toByteArray();
        } else {
            body = new byte[0];
        }
        return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static Answer exchange(TestServer server, String request) throws IOException {
        try (Socket socket = connect(server)) {
            send(socket, request);
            return read(socket.getInputStream());
        }
    }

    /** The log's lines once it has each of {@code fragments} (the server logs a request after its answer). */
    private static List<String> logOnceItHas(TestServer server, String... fragments) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!java.util.Arrays.stream(fragments).allMatch(server.log()::contains) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return server.log().lines().toList();
    }

    // A. A disconnect cancels a whole request as it cancels a stream.

    @Test
    void aClientThatGoesAwayCancelsItsWholeRequest() throws Exception {
        try (TestServer slow = TestServer.load(64)) {
            // Only a cancel ends it.
            ScriptedEngine engine = ScriptedEngine.endless(slow.tokenizer.encode(SCRIPT), Duration.ofMillis(20));
            slow.serveWith(engine, config(List.of(), List.of(), false));
            try (Socket socket = connect(slow)) {
                send(socket, post("/v1/chat/completions", "application/json", CHAT));
                assertTrue(engine.started.await(60, TimeUnit.SECONDS), "the generation started");
            }
            assertTrue(engine.cancelled.await(60, TimeUnit.SECONDS), "the engine was told to stop");
            String line = logOnceItHas(slow, "POST /v1/chat/completions cancelled").stream()
                    .filter(l -> l.startsWith("fs: POST /v1/chat/completions")).findFirst().orElseThrow();
            assertTrue(line.contains(" cancelled (") && line.contains("the client went away"), line);
        }
    }

    // B. Timeouts and header limits.

    @Test
    void headersSentAByteAtATimeAreCutWith408() throws Exception {
        try (Socket socket = connect(fixture)) {
            send(socket, "GET /health HTTP/1.1\r\nHost: localhost\r\n");
            Thread trickle = Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < 600; i++) { // a byte each 100 ms: the idle timeout never passes
                        send(socket, "X");
                        Thread.sleep(100);
                    }
                } catch (IOException | InterruptedException e) {
                    // the server closed the connection, as it should
                }
            });
            Answer answer = read(socket.getInputStream());
            assertEquals(408, answer.status(), answer.body());
            assertEquals("request_timeout", answer.error().get("code").textValue());
            trickle.interrupt();
        }
    }

    @Test
    void aBodyThatStopsArrivingIsAnswered408() throws Exception {
        try (Socket socket = connect(fixture)) {
            send(socket, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n{\"");
            Answer answer = read(socket.getInputStream());
            assertEquals(408, answer.status(), answer.body());
            assertEquals("request_timeout", answer.error().get("code").textValue());
        }
    }

    @Test
    void aStreamReaderThatStallsLosesItsSlot() throws Exception {
        try (TestServer flood = TestServer.load(64)) {
            // Events until cancelled, megabytes a second: the socket buffers fill within seconds.
            ScriptedEngine engine = ScriptedEngine.endless(flood.tokenizer.encode(SCRIPT), Duration.ofNanos(20_000));
            flood.serveWith(engine, config(List.of(), List.of(), false));
            try (Socket socket = new Socket()) {
                socket.setReceiveBufferSize(4096);
                socket.connect(new InetSocketAddress("127.0.0.1", flood.serverAddress().getPort()));
                send(socket, post("/v1/chat/completions", "application/json", STREAMED_CHAT));
                // Never reads: the server's writes block once the buffers are full, and the send timeout ends them.
                assertTrue(engine.cancelled.await(120, TimeUnit.SECONDS), "the stalled stream was cancelled");
            }
            String line = logOnceItHas(flood, "POST /v1/chat/completions cancelled").stream()
                    .filter(l -> l.startsWith("fs: POST /v1/chat/completions")).findFirst().orElseThrow();
            assertTrue(line.contains("the client did not read the answer for 2 s (fs serve --send-timeout)"), line);
            assertFalse(line.contains("Exception"), line);
        }
    }

    @Test
    void aBodyThatTricklesInIsCutOnceItFallsBehindTheRateFloor() throws Exception {
        try (TestServer rated = TestServer.load(64)) {
            // Each pause (200 ms) is far within the body timeout; the whole body is not: 1 s, then 100 bytes a second.
            ServerConfig.Timeouts timeouts = new ServerConfig.Timeouts(SHORT.header(), SHORT.body(), SHORT.send(),
                    SHORT.idle(), new ServerConfig.BodyRate(Duration.ofSeconds(1), 100));
            rated.serveWith(new ScriptedEngine(rated.tokenizer.encode(SCRIPT), 0),
                    new ServerConfig("127.0.0.1", 0, null, List.of(), List.of(), timeouts, false));
            try (Socket socket = connect(rated)) {
                send(socket, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                        + "application/json\r\nContent-Length: 1000\r\n\r\n");
                Thread trickle = Thread.ofVirtual().start(() -> {
                    try {
                        for (int i = 0; i < 1000; i++) {
                            send(socket, " ");
                            Thread.sleep(200);
                        }
                    } catch (IOException | InterruptedException e) {
                        // the server closed the connection, as it should
                    }
                });
                Answer answer = read(socket.getInputStream());
                trickle.interrupt();
                assertEquals(408, answer.status(), answer.body());
                assertEquals("request_timeout", answer.error().get("code").textValue());
                assertTrue(answer.error().get("message").textValue().contains("arrived too slowly"), answer.body());
            }
            String line = logOnceItHas(rated, "POST /v1/chat/completions 408").stream()
                    .filter(l -> l.startsWith("fs: POST /v1/chat/completions 408")).findFirst().orElseThrow();
            assertTrue(line.contains("arrived too slowly"), line);
        }
    }

    @Test
    void tooManyOrTooLargeHeadersAre431() throws Exception {
        StringBuilder thousand = new StringBuilder("GET /v1/models HTTP/1.1\r\nHost: localhost\r\n");
        for (int i = 0; i < 1000; i++) thousand.append("X-Header-").append(i).append(": ").append(i).append("\r\n");
        Answer large = exchange(fixture, thousand.append("\r\n").toString());
        assertEquals(431, large.status(), large.body());
        assertEquals("request_header_fields_too_large", large.error().get("code").textValue());

        StringBuilder many = new StringBuilder("GET /v1/models HTTP/1.1\r\nHost: localhost\r\n");
        for (int i = 0; i < ApiServer.MAX_HEADERS; i++) many.append("a").append(i).append(":1\r\n");
        Answer counted = exchange(fixture, many.append("\r\n").toString());
        assertEquals(431, counted.status(), counted.body());
        assertEquals("request_header_fields_too_large", counted.error().get("code").textValue());
    }

    // C. The log: one line per request, whatever the request holds.

    @Test
    void nothingARequestHoldsCanForgeALogLine() throws Exception {
        Answer path = exchange(fixture, "GET /x%0d%0afs:%20GET%20/FORGED%20200%20(0.000%20s) HTTP/1.1\r\n"
                + "Host: localhost\r\n\r\n");
        assertEquals(400, path.status(), path.body()); // a control character in the path is refused outright
        path.error();
        Answer model = exchange(fixture, post("/v1/chat/completions", "application/json",
                "{\"model\":\"m\\r\\nfs: POST /FORGED 200 (0.000 s)\\u2028x\",\"messages\":[{\"role\":\"user\","
                        + "\"content\":\"Hi\"}]}"));
        assertEquals(404, model.status(), model.body());
        List<String> lines = logOnceItHas(fixture, "/FORGED", "POST /v1/chat/completions 404");
        assertTrue(lines.stream().allMatch(l -> l.startsWith("fs: ")), String.join("\n", lines));
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("fs: GET /FORGED") || l.startsWith("fs: POST /FORGED")),
                String.join("\n", lines));
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("fs: POST /v1/chat/completions 404")
                && l.contains("m\\u000d\\u000afs: POST /FORGED 200 (0.000 s)\\u2028x")), String.join("\n", lines));
        assertTrue(lines.stream().noneMatch(l -> l.contains("\u2028")), "a line separator is escaped too");
    }

    @Test
    void theJsonAccessLogIsOneObjectPerLine() throws Exception {
        try (TestServer logged = TestServer.load(64)) {
            logged.serveWith(new ScriptedEngine(logged.tokenizer.encode(SCRIPT), 0), config(List.of(), List.of(), true));
            assertEquals(200, exchange(logged, post("/v1/completions", "application/json",
                    "{\"prompt\":\"Say\",\"max_tokens\":3}")).status());
            assertEquals(404, exchange(logged, post("/v1/completions", "application/json",
                    "{\"prompt\":\"Say\",\"model\":\"a\\n{\\\"status\\\":200}\"}")).status());
            List<String> lines = logOnceItHas(logged, "\"status\":404", "\"status\":200");
            assertEquals(2, lines.size(), String.join("\n", lines));
            // A request is logged once answered: the second may be logged before the first.
            int first = lines.get(0).contains("\"status\":200") ? 0 : 1;
            JsonNode completion = JSON.readTree(lines.get(first));
            assertEquals("POST", completion.get("method").textValue());
            assertEquals("/v1/completions", completion.get("path").textValue());
            assertEquals(200, completion.get("status").intValue());
            assertEquals(3, completion.get("completion_tokens").intValue());
            assertEquals("length", completion.get("finish_reason").textValue());
            JsonNode missing = JSON.readTree(lines.get(1 - first));
            assertTrue(missing.get("error").textValue().contains("'a\\u000a{\"status\":200}'"), lines.get(1 - first));
            assertEquals(404, missing.get("status").intValue());
        }
    }

    // D and E. Broken HTTP: an OpenAI error object with the right status, never HTML, never a silent close.

    @Test
    void aMalformedChunkedBodyIsAnswered400() throws Exception {
        Answer answer = exchange(fixture, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n");
        assertEquals(400, answer.status(), answer.body());
        answer.error();
    }

    @Test
    void everyProtocolErrorIsAnOpenAiErrorObject() throws Exception {
        String json = "Content-Type: application/json\r\n";
        Map<String, Integer> cases = new java.util.LinkedHashMap<>();
        cases.put("GET /v1/%zz HTTP/1.1\r\nHost: localhost\r\n\r\n", 400);
        cases.put("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n" + json + "Content-Length: abc\r\n\r\n{}", 400);
        cases.put("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n" + json + "Content-Length: -5\r\n\r\n{}", 400);
        cases.put("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n" + json
                + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400);
        cases.put("\u0001garbage here\r\n\r\n", 400);
        // Not chunked last: where the body ends is unknown, which RFC 9112 answers 400; chunked last: a coding the
        // server cannot undo, 501.
        cases.put("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n" + json
                + "Transfer-Encoding: gzip\r\n\r\n{}", 400);
        cases.put("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n" + json
                + "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501);
        cases.put("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n" + json + "\r\n", 411);
        cases.put("GET /" + "a".repeat(ApiServer.MAX_HEADER_BYTES + 10) + " HTTP/1.1\r\nHost: localhost\r\n\r\n",
                414);
        cases.put("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\n" + json + "Content-Length: "
                + (ApiServer.MAX_BODY_BYTES + 1) + "\r\n\r\n{", 413);
        for (Map.Entry<String, Integer> c : cases.entrySet()) {
            String what = c.getKey().substring(0, Math.min(90, c.getKey().length()));
            Answer answer = exchange(fixture, c.getKey());
            assertEquals(c.getValue(), answer.status(), what + " -> " + answer.body());
            answer.error();
            assertFalse(answer.body().contains("<"), "never HTML: " + answer.body());
        }
        assertEquals(200, exchange(fixture, "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n").status(), "serves on");
    }

    @Test
    void anHttp2PrefaceAndAConnectAreJsonErrorsEachLogged() throws Exception {
        Answer preface = exchange(fixture, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        assertEquals(426, preface.status(), preface.body());
        assertEquals("http2_not_supported", preface.error().get("code").textValue());
        assertEquals("invalid_request_error", preface.error().get("type").textValue());
        Answer connect = exchange(fixture, "CONNECT localhost:22 HTTP/1.1\r\n\r\n");
        assertEquals(400, connect.status(), connect.body());
        connect.error();
        List<String> lines = logOnceItHas(fixture, "fs: PRI * 426", "fs: CONNECT - 400");
        assertEquals(1, lines.stream().filter(l -> l.startsWith("fs: PRI * 426")).count(), String.join("\n", lines));
    }

    @Test
    void httpVersionsNotSpokenAreTheClientsFault() throws Exception {
        for (String line : List.of("GET /health\r\n", "GET /health HTTP/3.0\r\nHost: localhost\r\n\r\n")) {
            Answer answer = exchange(fixture, line);
            assertEquals(505, answer.status(), answer.body());
            assertEquals("invalid_request_error", answer.error().get("type").textValue(), answer.body());
            assertEquals("http_version_not_supported", answer.error().get("code").textValue(), answer.body());
        }
    }

    @Test
    void eachBrokenBodySaysWhatIsWrongWithIt() throws Exception {
        String chunked = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n";
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put(chunked + "zz\r\n{}\r\n0\r\n\r\n", "a chunk size is not hex digits");
        cases.put(chunked + "2\r\n{}XX\r\n0\r\n\r\n", "a chunk's data is not followed by CRLF");
        cases.put(chunked + "2\r\n{}\r\n0\r\nbad trailer\r\n\r\n", "a trailer field after the last chunk");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Answer answer = exchange(fixture, c.getKey());
            assertEquals(400, answer.status(), answer.body());
            assertTrue(answer.error().get("message").textValue().contains(c.getValue()), answer.body());
        }
        // Cut short: the client sends part of its body and closes its end (it still reads the answer).
        Map<String, String> truncated = Map.of(
                chunked + "9\r\n{}", "the chunked body ended before its last, empty chunk",
                post("/v1/chat/completions", "application/json", "{}").replace("Content-Length: 2", "Content-Length: 10"),
                "the body ended after 2 of its 10 bytes");
        for (Map.Entry<String, String> c : truncated.entrySet()) {
            try (Socket socket = connect(fixture)) {
                send(socket, c.getKey());
                socket.shutdownOutput();
                Answer answer = read(socket.getInputStream());
                assertEquals(400, answer.status(), answer.body());
                assertTrue(answer.error().get("message").textValue().contains(c.getValue()), answer.body());
            }
        }
    }

    @Test
    void aSamplingValueNoSamplerTakesNamesItsField() throws Exception {
        Map<String, String> cases = Map.of("\"temperature\":-1", "temperature", "\"top_k\":-1", "top_k",
                "\"top_p\":0", "top_p", "\"min_p\":2", "min_p", "\"repeat_penalty\":0", "repetition_penalty");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Answer answer = exchange(fixture, post("/v1/chat/completions", "application/json",
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]," + c.getKey() + "}"));
            assertEquals(400, answer.status(), answer.body());
            assertEquals(c.getValue(), answer.error().get("param").textValue(), answer.body());
        }
    }

    // F. Cross-site requests.

    @Test
    void aBodyThatIsNotJsonIs415() throws Exception {
        for (String type : new String[] {"text/plain", "application/x-www-form-urlencoded", null}) {
            Answer answer = exchange(fixture, post("/v1/chat/completions", type, CHAT));
            assertEquals(415, answer.status(), type + " -> " + answer.body());
            assertEquals("unsupported_media_type", answer.error().get("code").textValue());
        }
        assertEquals(200, exchange(fixture, post("/v1/chat/completions", "application/json; charset=utf-8", CHAT))
                .status());
    }

    @Test
    void aHostHeaderThatDoesNotNameTheServerIs403() throws Exception {
        String rebound = post("/v1/chat/completions", "application/json", CHAT).replace("Host: localhost",
                "Host: evil.example.com:8080");
        Answer refused = exchange(fixture, rebound);
        assertEquals(403, refused.status(), refused.body());
        assertEquals("host_not_allowed", refused.error().get("code").textValue());
        for (String host : List.of("localhost:8080", "127.0.0.1", "[::1]:8080", "app.localhost")) {
            Answer served = exchange(fixture, rebound.replace("evil.example.com:8080", host));
            assertEquals(200, served.status(), host + " -> " + served.body());
        }
        assertEquals(200, exchange(fixture, "GET /health HTTP/1.1\r\nHost: evil.example.com\r\n\r\n").status(),
                "/health stays open");
        try (TestServer named = TestServer.load(64)) {
            named.serveWith(new ScriptedEngine(named.tokenizer.encode(SCRIPT), 0),
                    config(List.of("evil.example.com"), List.of(), false));
            assertEquals(200, exchange(named, rebound).status(), "--allowed-hosts names it");
        }
    }

    @Test
    void corsHeadersGoOnlyToTheOriginsCorsNames() throws Exception {
        String fromPage = post("/v1/chat/completions", "application/json", CHAT, "Origin: https://app.example");
        Answer plain = exchange(fixture, fromPage);
        assertEquals(200, plain.status());
        assertTrue(plain.headers().keySet().stream().noneMatch(h -> h.startsWith("access-control-")), plain.headers()
                .toString());
        Answer noPreflight = exchange(fixture, "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                + "Origin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n\r\n");
        assertNull(noPreflight.headers().get("access-control-allow-origin"));
        try (TestServer cors = TestServer.load(64)) {
            cors.serveWith(new ScriptedEngine(cors.tokenizer.encode(SCRIPT), 0),
                    config(List.of(), List.of("https://app.example"), false));
            Answer allowed = exchange(cors, fromPage);
            assertEquals("https://app.example", allowed.headers().get("access-control-allow-origin"));
            Answer other = exchange(cors, fromPage.replace("https://app.example", "https://other.example"));
            assertNull(other.headers().get("access-control-allow-origin"), other.headers().toString());
            Answer preflight = exchange(cors, "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                    + "Origin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n"
                    + "Access-Control-Request-Headers: authorization, content-type\r\n\r\n");
            assertEquals(204, preflight.status());
            assertEquals("https://app.example", preflight.headers().get("access-control-allow-origin"));
            assertTrue(preflight.headers().get("access-control-allow-methods").contains("POST"));
            assertEquals("authorization, content-type", preflight.headers().get("access-control-allow-headers"));
        }
    }
}
