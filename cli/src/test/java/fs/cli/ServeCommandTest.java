package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.engine.Engine;
import fs.model.Golden;
import fs.source.CheckpointGguf;
import fs.source.ModelSource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fs serve's refusals, each one line and the CLI's exit status, before any model is loaded or while it loads; and a
 * live fs serve, in this JVM, for what its flags do to requests.
 */
class ServeCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path MODEL = Golden.modelDir("tiny-tied");


    private record Run(int exit, String err) {}

    private static Run serve(String... args) {
        StringWriter err = new StringWriter();
        String[] command = new String[args.length + 1];
        command[0] = "serve";
        System.arraycopy(args, 0, command, 1, args.length);
        int exit = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err, true), command);
        return new Run(exit, err.toString());
    }

    private static void assertOneErrorLine(Run run, int exit, String fragment) {
        assertEquals(exit, run.exit(), run.err());
        String[] lines = run.err().strip().split("\n");
        String last = lines[lines.length - 1];
        assertTrue(last.startsWith("fs: ") && last.contains(fragment), run.err());
        assertTrue(!run.err().contains("\tat "), "no stack trace: " + run.err());
    }

    @Test
    void flagsOutOfRangeAreUsageErrors() {
        assertOneErrorLine(serve("--port", "70000"), 2, "--port must be between 0 and 65535");
        assertOneErrorLine(serve("--parallel", "0"), 2, "--parallel must be in 1..256");
        assertOneErrorLine(serve("--parallel", "300"), 2, "--parallel must be in 1..256");
        assertOneErrorLine(serve("--queue", "0"), 2, "--queue must be at least 1");
        assertOneErrorLine(serve("--header-timeout", "0"), 2, "--header-timeout must be at least 1 second");
        assertOneErrorLine(serve("--send-timeout", "-3"), 2, "--send-timeout must be at least 1 second");
        assertOneErrorLine(serve("--log-format", "xml"), 2, "--log-format must be text or json");
    }

    @Test
    void theCrossSiteAndLogFlagsReachTheServer() throws Exception {
        try (LiveServe live = new LiveServe(MODEL.toString(), "--port", "0", "-t", "2", "--backend", "cpu",
                "--ctx", "64", "--allowed-hosts", "my.example", "--cors", "https://app.example", "--log-format", "json",
                "--header-timeout", "5", "--body-timeout", "5", "--send-timeout", "5", "--idle-timeout", "5")) {
            String named = live.rawGet("/v1/models", "my.example:8080", "https://app.example");
            assertTrue(named.startsWith("HTTP/1.1 200"), named);
            assertTrue(named.contains("Access-Control-Allow-Origin: https://app.example"), named);
            String other = live.rawGet("/v1/models", "other.example", "https://other.example");
            assertTrue(other.startsWith("HTTP/1.1 403"), other);
            assertTrue(!other.contains("Access-Control-Allow-Origin"), other);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos(); // logged once answered
            while (!live.log().contains("\"status\":403") && System.nanoTime() < deadline) Thread.sleep(20);
            String line = live.log().lines().filter(l -> l.contains("\"status\":403")).findFirst().orElseThrow();
            assertEquals("/v1/models", JSON.readTree(line).get("path").textValue());
        }
    }

    @Test
    void aContextTooSmallToShareAmongTheSlotsIsOneLine() {
        Run run = serve(MODEL.toString(), "--port", "0", "--ctx", "3", "--parallel", "4");
        assertOneErrorLine(run, 1, "--ctx 3 shared among --parallel 4 slots leaves none for each");
    }

    /**
     * fs serve loads through the engine: without --ctx the context is the engine's default, which the load line
     * reports and the scheduler shares out among the slots (a request that needs more than a slot's share is refused
     * with that share).
     */
    @Test
    void theDefaultContextIsTheEnginesSharedOutAmongTheSlots() throws Exception {
        int context;
        try (ModelSource source = Engine.open(MODEL.toString(), new PrintWriter(Writer.nullWriter()))) {
            context = Engine.defaultContextLength(source.config());
        }
        try (LiveServe live = new LiveServe(MODEL.toString(), "--port", "0", "-t", "2", "--backend", "cpu",
                "--parallel", "2")) {
            assertTrue(live.log().contains(", context " + context + ", on "), live.log());
            int share = context / 2;
            HttpResponse<String> refused = live.post("/v1/completions",
                    "{\"prompt\":\"Hello\",\"max_tokens\":" + share + "}");
            assertEquals(400, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("do not fit this server's context of " + share + " tokens"),
                    refused.body());
        }
    }

    @Test
    void aPortInUseIsOneLine() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Run run = serve(MODEL.toString(), "--port", Integer.toString(taken.getLocalPort()));
            assertOneErrorLine(run, 1, "cannot listen on 127.0.0.1:" + taken.getLocalPort()
                    + ": the port is in use by another program: choose another with --port N (--port 0 picks a free"
                    + " one)");
        }
    }

    @Test
    void aModelThatCannotLoadEndsTheServerWithItsError() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Run run = serve(MODEL.resolve("no-such-model").toString(), "--port", Integer.toString(port));
        assertEquals(1, run.exit(), run.err());
        assertTrue(run.err().contains("fs: listening on http://127.0.0.1:" + port), run.err());
        // The port is free again: the server stopped with the command.
        try (ServerSocket again = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertEquals(port, again.getLocalPort());
        }
    }

    @Test
    void embeddingAndRerankAreExclusive() {
        assertOneErrorLine(serve(MODEL.toString(), "--embedding", "--rerank"), 2,
                "--embedding and --rerank are exclusive");
    }

    /** Each task refuses, in one line and before the upload where the files tell, a model not made for it. */
    @Test
    void aModelNotMadeForTheTaskIsOneLine() {
        String embedder = Golden.modelDir("tiny-embed").toString();
        String reranker = Golden.modelDir("tiny-rerank").toString();
        assertOneErrorLine(serve(embedder, "--port", "0"), 1, "is an embedding model (pooling last): serve it with "
                + "--embedding");
        assertOneErrorLine(serve(embedder, "--port", "0", "--rerank"), 1, "is an embedding model");
        assertOneErrorLine(serve(reranker, "--port", "0", "--embedding"), 1, "is not an embedding model");
    }

    /** llama-server's flags, spelled either way: the endpoint each serves answers, the completions do not. */
    @Test
    void embeddingAndRerankServeTheirEndpoints() throws Exception {
        String embedder = Golden.modelDir("tiny-embed").toString();
        int hidden;
        try (ModelSource source = Engine.open(embedder, new PrintWriter(Writer.nullWriter()))) {
            hidden = source.config().hiddenSize();
        }
        try (LiveServe live = new LiveServe(embedder, "--port", "0", "-t", "2", "--backend", "cpu", "--ctx", "128",
                "--embeddings")) {
            HttpResponse<String> embedded = live.post("/v1/embeddings", "{\"input\":[\"a\",\"b c\"]}");
            assertEquals(200, embedded.statusCode(), embedded.body());
            JsonNode data = JSON.readTree(embedded.body()).get("data");
            assertEquals(2, data.size());
            assertEquals(hidden, data.get(1).get("embedding").size(), "every entry of the last hidden state");
            assertEquals(501, live.post("/v1/chat/completions", "{\"messages\":[]}").statusCode());
        }
        try (LiveServe live = new LiveServe(Golden.modelDir("tiny-rerank").toString(), "--port", "0", "-t", "2",
                "--backend", "cpu", "--ctx", "256", "--reranking")) {
            HttpResponse<String> ranked = live.post("/v1/rerank", "{\"query\":\"q\",\"documents\":[\"a\",\"b\"],"
                    + "\"top_n\":1}");
            assertEquals(200, ranked.statusCode(), ranked.body());
            assertEquals(1, JSON.readTree(ranked.body()).get("results").size());
            assertEquals(501, live.post("/v1/embeddings", "{\"input\":\"a\"}").statusCode());
        }
    }

    /** fs serve --rerank on llama.cpp's reranker GGUF of the held-out reranker: the reference's P(yes). */
    @Test
    void aRerankerGgufServesRerank(@TempDir Path dir) throws Exception {
        Path checkpoint = Golden.modelDir("tiny-rerank-heldout");
        JsonNode cases = JSON.readTree(checkpoint.resolve("golden").resolve("rerank.json").toFile()).get("cases");
        Path gguf = CheckpointGguf.writeReranker(checkpoint, dir.resolve("rerank.gguf"), 2);
        try (LiveServe live = new LiveServe(gguf.toString(), "--port", "0", "-t", "2", "--backend", "cpu", "--ctx",
                "256", "--rerank")) {
            ObjectNode request = JSON.createObjectNode().put("query", cases.get(0).get("query").asText());
            request.putArray("documents").add(cases.get(0).get("document").asText())
                    .add(cases.get(1).get("document").asText());
            HttpResponse<String> ranked = live.post("/v1/rerank", request.toString());
            assertEquals(200, ranked.statusCode(), ranked.body());
            JsonNode results = JSON.readTree(ranked.body()).get("results");
            assertEquals(2, results.size());
            for (JsonNode result : results) {
                int index = result.get("index").asInt();
                assertEquals(cases.get(index).get("p_yes").asDouble(), result.get("relevance_score").asDouble(), 1e-3,
                        "document " + index);
            }
        }
    }

    @Test
    void anEmptyApiKeyIsRefused() {
        assertOneErrorLine(serve("--api-key", " "), 2, "--api-key is empty (see 'fs serve --help')");
    }

    @Test
    void anEmptyAliasIsRefused() {
        assertOneErrorLine(serve("--alias", ""), 2, "--alias is empty (see 'fs serve --help')");
    }

    /**
     * llama-server's -a/--alias and its sampling defaults: the alias is the only model id, and a request that leaves a
     * sampling field out gets the flag's value, one that gives it keeps its own. With --temp 1000 and no top-k or
     * top-p, tiny-tied samples nearly uniformly from 151,936 tokens: six of them match greedy decoding, or another
     * seed's, by no chance worth counting; with --seed, the same request gives the same text.
     */
    @Test
    void theAliasNamesTheModelAndTheSamplingFlagsAreTheRequestsDefaults() throws Exception {
        try (LiveServe live = new LiveServe(MODEL.toString(), "--port", "0", "-t", "2", "--backend", "cpu",
                "--ctx", "256", "--alias", "my-model", "--temp", "1000", "--top-k", "0", "--top-p", "1", "--seed",
                "11")) {
            JsonNode models = JSON.readTree(live.get("/v1/models").body()).get("data");
            assertEquals(1, models.size(), models.toString());
            assertEquals("my-model", models.get(0).get("id").textValue());

            HttpResponse<String> other = live.post("/v1/completions",
                    "{\"model\":\"" + "tiny-tied" + "\",\"prompt\":\"Hello\",\"max_tokens\":2}");
            assertEquals(404, other.statusCode(), other.body());
            assertEquals("model_not_found", JSON.readTree(other.body()).get("error").get("code").textValue());

            String defaults = live.complete(",\"model\":\"my-model\"");
            assertEquals(defaults, live.complete(""), "the same seed, --seed's: the same text");
            String greedy = live.complete(",\"temperature\":0");
            assertNotEquals(greedy, defaults, "--temp 1000 applies when the request gives no temperature");
            assertEquals(greedy, live.complete(",\"temperature\":0,\"seed\":5"), "greedy whatever the seed");
            assertNotEquals(defaults, live.complete(",\"seed\":12"), "the request's seed wins over --seed");
        }
    }
}
