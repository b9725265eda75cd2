package fs.server;

import fs.generate.Scheduler;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The serial engine behind the server with one queue place: while one request runs (held at its first token) and one
 * waits, a third gets 503 with Retry-After; once the first is let go, both others are answered.
 */
class QueueOverflowTest {
    private static final String CHAT =
            "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":4,\"temperature\":0}";

    @Test
    void beyondTheQueueRequestsGet503AndTheOthersAreAnswered() throws Exception {
        try (TestServer fixture = TestServer.load(128)) {
            CountDownLatch gate = new CountDownLatch(1);
            SchedulerEngine engine = SchedulerEngine.over(
                    new Scheduler(fixture.model.model(), new Scheduler.Config(1, 128, 64, 1)), fixture.stopIds, () -> {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            fixture.serve(engine, null);
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest request = HttpRequest.newBuilder(URI.create(fixture.url("/v1/chat/completions")))
                    .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(CHAT)).build();

            CompletableFuture<HttpResponse<String>> running = http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
            awaitLoad(engine, new CompletionEngine.Load(1, 1, 0));
            CompletableFuture<HttpResponse<String>> queued = http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
            awaitLoad(engine, new CompletionEngine.Load(1, 1, 1));

            HttpResponse<String> refused = http.send(request, HttpResponse.BodyHandlers.ofString());
            assertEquals(503, refused.statusCode(), refused.body());
            assertEquals("1", refused.headers().firstValue("Retry-After").orElse(""));
            assertTrue(new ObjectMapper().readTree(refused.body()).at("/error/message").textValue().contains("busy"));

            gate.countDown();
            assertEquals(200, running.get(60, TimeUnit.SECONDS).statusCode());
            assertEquals(200, queued.get(60, TimeUnit.SECONDS).statusCode());
        }
    }

    private static void awaitLoad(CompletionEngine engine, CompletionEngine.Load wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!engine.load().equals(wanted)) {
            if (System.nanoTime() > deadline) throw new AssertionError("load " + engine.load() + ", wanted " + wanted);
            Thread.sleep(10);
        }
    }
}
