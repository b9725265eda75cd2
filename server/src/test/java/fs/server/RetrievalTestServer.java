package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.embed.ScheduledRetrieval;
import fs.engine.BackendChoice;
import fs.engine.Engine;
import fs.engine.LoadedModel;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.model.Golden;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A tiny embedding model or reranker of models/ loaded as fs serve loads it (the engine, one scheduler slot, the
 * retrieval over its thread) on the exact Java backend, served for {@link ServedTask#EMBEDDING} or
 * {@link ServedTask#RERANK} on a free port of 127.0.0.1, warmed up as fs serve warms it; and the float64 goldens
 * committed beside it.
 */
final class RetrievalTestServer implements AutoCloseable {
    /** Positions an input may take: enough for the goldens, few enough for a too-long input to be short. */
    static final int CONTEXT = 256;
    private static final ObjectMapper JSON = new ObjectMapper();

    final String id;
    private final LoadedModel<Scheduler> loaded;
    private final ApiServer server;

    private RetrievalTestServer(String checkpoint, ServedTask task) throws InterruptedException {
        id = checkpoint;
        Engine.Options options = new Engine.Options(BackendChoice.JAVA, null, 2, CONTEXT, "the context length", null,
                null, null, new PrintWriter(Writer.nullWriter()));
        loaded = Engine.load(ModelSource.open(Golden.modelDir(checkpoint)), options, context -> (model, types) ->
                new Scheduler(model, new Scheduler.Config(1, context, Engine.PREFILL_CHUNK, 4), types));
        Tokenizer tokenizer = loaded.source().tokenizer();
        CompletionEngine engine = SchedulerEngine.over(loaded.state(), loaded.source().stopIds(), () -> {});
        ServedModel served = new ServedModel(id, 1,
                TestServer.details(loaded.source().tensors().tensors(), loaded.config()), tokenizer, () -> loaded.source().chatTemplate(),
                SamplingParams::greedy, engine, task, new ScheduledRetrieval(loaded, tokenizer));
        WarmUp.run(served);
        server = ApiServer.start("127.0.0.1", 0, null, new PrintWriter(new StringWriter(), true));
        server.ready(served);
    }

    static RetrievalTestServer start(String checkpoint, ServedTask task) throws InterruptedException {
        return new RetrievalTestServer(checkpoint, task);
    }

    /** The checkpoint's golden/{@code file}. */
    JsonNode golden(String file) throws IOException {
        return JSON.readTree(Golden.modelDir(id).resolve("golden").resolve(file).toFile());
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.address().getPort() + path;
    }

    /**
     * POSTs {@code body} as JSON to {@code path}: the status and the parsed body. A client of its own each time: a
     * shared one's kept-alive connection, closed by the server after an answer that left a body unread, was once
     * taken for the next request and failed it with "header parser received no bytes" (a POST is not retried).
     */
    Answer post(String path, String body) throws IOException, InterruptedException {
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url(path)))
                    .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), JSON.readTree(response.body()));
        }
    }

    record Answer(int status, JsonNode body) {}

    /**
     * POSTs {@code body} to {@code path} and asserts OpenAI's 400 invalid_request_error naming {@code param}, whose
     * message holds every fragment.
     */
    void assertBad(String path, String body, String param, String... fragments) throws Exception {
        Answer answer = post(path, body);
        String shown = body.length() > 80 ? body.substring(0, 80) + "…" : body;
        assertEquals(400, answer.status(), shown + ": " + answer.body());
        JsonNode error = answer.body().get("error");
        assertEquals("invalid_request_error", error.get("type").asText(), shown);
        assertEquals(param, error.get("param").asText(), shown + ": " + error);
        for (String fragment : fragments) {
            assertTrue(error.get("message").asText().contains(fragment), shown + ": " + error);
        }
    }

    @Override
    public void close() {
        try {
            server.shutdown(Duration.ofSeconds(1)); // closes the engine, and so the scheduler
        } finally {
            loaded.close();
        }
    }
}
