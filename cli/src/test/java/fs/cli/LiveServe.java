package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import sun.misc.Signal;

/**
 * fs serve running in this JVM on a thread of its own (port 0: the one it prints), for the tests that send it
 * requests, until {@link #close} stops it as Ctrl-C does (its SIGINT handler) and checks that it exited 0.
 */
final class LiveServe implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final Pattern LISTENING = Pattern.compile("fs: listening on http://127\\.0\\.0\\.1:(\\d+) ");
    private final StringWriter err = new StringWriter();
    private final Thread thread;
    private final int port;
    private int exit = -1;

    LiveServe(String... args) throws InterruptedException {
        String[] command = new String[args.length + 1];
        command[0] = "serve";
        System.arraycopy(args, 0, command, 1, args.length);
        thread = Thread.ofPlatform().daemon().start(() ->
                exit = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err, true), command));
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        // "ready" comes once the signal handlers are in place: only then may close() raise SIGINT
        while (!err.toString().contains("fs: ready")) {
            if (!thread.isAlive() || System.nanoTime() > deadline) fail("fs serve did not get ready: " + err);
            Thread.sleep(20);
        }
        Matcher listening = LISTENING.matcher(err.toString());
        assertTrue(listening.find(), err.toString());
        port = Integer.parseInt(listening.group(1));
    }

    HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The text of a completion of "Hello" with the request's own {@code fields} besides the prompt. */
    String complete(String fields) throws Exception {
        HttpResponse<String> response =
                post("/v1/completions", "{\"prompt\":\"Hello\",\"max_tokens\":6" + fields + "}");
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body()).get("choices").get(0).get("text").textValue();
    }

    /** One raw HTTP/1.1 GET with the given Host (and Origin, unless null): the whole response as text. */
    String rawGet(String path, String host, String origin) throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            socket.setSoTimeout(60_000);
            String request = "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n"
                    + (origin != null ? "Origin: " + origin + "\r\n" : "") + "Connection: close\r\n\r\n";
            socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** A streamed chat completion of {@code question} at temperature 0, sent now: its content, put together. */
    CompletableFuture<String> streamedChat(String question) {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":" + JSON.valueToTree(question)
                + "}],\"max_tokens\":8,\"temperature\":0,\"stream\":true}";
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofLines()).thenApply(response -> {
            assertEquals(200, response.statusCode());
            StringBuilder content = new StringBuilder();
            boolean[] done = {false};
            response.body().forEach(line -> {
                if (!line.startsWith("data: ")) return;
                String data = line.substring(6);
                if (data.equals("[DONE]")) {
                    done[0] = true;
                    return;
                }
                try {
                    JsonNode delta = JSON.readTree(data).get("choices").get(0).get("delta");
                    if (delta != null && delta.hasNonNull("content")) content.append(delta.get("content").textValue());
                } catch (IOException e) {
                    throw new AssertionError(data, e);
                }
            });
            assertTrue(done[0], "the stream ends with [DONE]");
            return content.toString();
        });
    }

    int port() {
        return port;
    }

    String log() {
        return err.toString();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Override
    public void close() throws InterruptedException {
        Signal.raise(new Signal("INT"));
        thread.join(Duration.ofSeconds(30));
        assertEquals(0, exit, err.toString());
    }
}
