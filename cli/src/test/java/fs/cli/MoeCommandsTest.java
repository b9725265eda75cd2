package fs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Every command that runs a model, on a Qwen3-MoE (models/q-moe: 8 experts, 3 per token, GGUF files as llama.cpp's
 * llama-quantize wrote them): logits equal to the golden's, perplexity and KL divergence, bench (one stream and
 * several), verify on OpenCL and --native, one chat turn, and a live fs serve answering two streamed chats at once as
 * it answers them one after the other. (fs run's greedy tokens on tiny-moe are RunCommandTest's.)
 */
class MoeCommandsTest {
    private static final Path DIR = Path.of(System.getProperty("fs.repo"), "models", "q-moe");
    private static final String BF16 = DIR.resolve("model-BF16.gguf").toString();
    private static final String Q4_K_M = DIR.resolve("model-Q4_K_M.gguf").toString();
    private static final ObjectMapper JSON = new ObjectMapper();

    private static int[] ints(JsonNode array) {
        return array.valueStream().mapToInt(JsonNode::intValue).toArray();
    }

    /** fs-core's test text (650 tokens for q-tied's tokenizer, which q-moe shares). */
    private static Path text() {
        return Path.of(System.getProperty("fs.repo"), "core", "src", "test", "resources", "eval", "eval-head.txt");
    }

    @Test
    void logitsAreTheGoldensAtEveryPosition() throws IOException {
        for (String type : List.of("BF16", "Q4_K_M")) {
            JsonNode golden = JSON.readTree(DIR.resolve("golden-" + type + ".json").toFile());
            CliRun run = CliRun.of("logits", DIR.resolve("model-" + type + ".gguf").toString(), "--tokens",
                    CliRun.ids(ints(golden.get("tokens"))), "--top", "5", "-t", "2", "--backend", "cpu",
                    "-ctk", "f32", "-ctv", "f32"); // the goldens' tolerance is the float32 cache's
            assertEquals(0, run.exitCode(), run.err());
            JsonNode positions = JSON.readTree(run.out()).get("positions");
            assertEquals(golden.get("positions").size(), positions.size());
            for (int p = 0; p < positions.size(); p++) {
                JsonNode want = golden.get("positions").get(p), got = positions.get(p);
                assertArrayEquals(ints(want.get("top_ids")), ints(got.get("top_ids")), type + " position " + p);
                for (int i = 0; i < 5; i++) {
                    assertEquals(want.get("top_logits").get(i).doubleValue(), got.get("top_logits").get(i).doubleValue(),
                            1e-3, type + " position " + p);
                }
            }
        }
    }

    private static JsonNode perplexity(String model, String... args) throws IOException {
        String[] command = new String[args.length + 9];
        System.arraycopy(new String[] {"perplexity", model, "-f", text().toString(), "--json", "-t", "2",
                "--backend", "cpu"}, 0, command, 0, 9);
        System.arraycopy(args, 0, command, 9, args.length);
        CliRun run = CliRun.of(command);
        assertEquals(0, run.exitCode(), run.err());
        return JSON.readTree(run.out());
    }

    @Test
    void perplexityAndKlDivergenceAgainstTheBf16File() throws IOException {
        JsonNode plain = perplexity(BF16, "-c", "128", "--chunks", "2");
        double ppl = plain.get("ppl").get("value").doubleValue();
        assertEquals(2, plain.get("windows").intValue());
        // Random weights with logits of ~3 are confidently wrong about real text: above the vocabulary's 8064.
        assertTrue(ppl > 1 && Double.isFinite(ppl), "ppl " + ppl);
        JsonNode same = perplexity(BF16, "-c", "128", "--chunks", "2", "--kl-divergence-base", BF16)
                .get("kl_divergence");
        assertEquals(0, same.get("kld").get("max").doubleValue());
        assertEquals(1, same.get("same_top_p").get("value").doubleValue());
        JsonNode q4 = perplexity(Q4_K_M, "-c", "128", "--chunks", "2", "--kl-divergence-base", BF16)
                .get("kl_divergence");
        assertEquals(ppl, q4.get("base_ppl").get("value").doubleValue(), 1e-12 * ppl);
        double kld = q4.get("kld").get("mean").doubleValue();
        assertTrue(kld > 0 && kld < 1, "KLD Q4_K_M " + kld);
        assertTrue(q4.get("same_top_p").get("value").doubleValue() < 1);
    }

    @Test
    void benchMeasuresOneStreamAndSeveral() throws IOException {
        CliRun bench = CliRun.of("bench", Q4_K_M, "-p", "8", "-n", "4", "-r", "1",
                "--warmup", "0", "-t", "2", "--backend", "cpu",
                "--json");
        assertEquals(0, bench.exitCode(), bench.err());
        JsonNode tests = JSON.readTree(bench.out());
        assertEquals(2, tests.size(), bench.out());
        for (JsonNode test : tests) {
            assertEquals(Q4_K_M, test.get("model_filename").textValue());
            assertTrue(test.get("avg_ts").doubleValue() > 0, test.toString());
        }

        CliRun parallel = CliRun.of("bench", Q4_K_M, "--parallel", "1,2", "-n", "4", "-r", "1",
                "--warmup", "0", "-t", "2",
                "--backend", "cpu", "--json");
        assertEquals(0, parallel.exitCode(), parallel.err());
        JsonNode streams = JSON.readTree(parallel.out());
        assertEquals(2, streams.size(), parallel.out());
        assertEquals(1, streams.get(0).get("n_parallel").intValue());
        assertEquals(2, streams.get(1).get("n_parallel").intValue());
        for (JsonNode test : streams) {
            assertTrue(test.get("avg_ts").doubleValue() > 0 && test.get("stream_avg_ts").doubleValue() > 0,
                    test.toString());
        }
    }

    @Test
    void verifyAgreesOnOpenClAndTheNativeKernelsAreWithinTheirBound() throws IOException {
        CliRun openCl = CliRun.of("verify", Q4_K_M, "--tokens", "1,2,3,4,5", "--json");
        assertEquals(0, openCl.exitCode(), openCl.out() + openCl.err());
        JsonNode report = JSON.readTree(openCl.out());
        assertTrue(report.get("agree").asBoolean(), openCl.out());
        assertTrue(report.get("first_over_threshold").isNull(), openCl.out());

        CliRun nativeKernels = CliRun.of("verify", Q4_K_M, "--tokens", "1,2,3,4,5", "--native");
        assertEquals(0, nativeKernels.exitCode(), nativeKernels.out() + nativeKernels.err());
        assertTrue(nativeKernels.out().strip().endsWith("OK: every native matmul is within its int8 bound"),
                nativeKernels.out());
    }

    @Test
    void chatAnswersOneTurnAsRunDoes() {
        InputStream original = System.in;
        System.setIn(new ByteArrayInputStream("Hello\n".getBytes(StandardCharsets.UTF_8)));
        CliRun chat;
        try {
            chat = CliRun.of("chat", BF16, "-n", "4", "--temp", "0", "-t", "2", "--backend", "cpu");
        } finally {
            System.setIn(original);
        }
        assertEquals(0, chat.exitCode(), chat.err());
        CliRun run = CliRun.of("run", BF16, "-p", "Hello", "-n", "4", "--temp", "0", "-t", "2", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        assertFalse(run.out().isBlank(), run.out());
        assertTrue(chat.out().startsWith(run.out()), "chat:\n" + chat.out() + "\nrun:\n" + run.out());
    }

    // ---- fs serve ------------------------------------------------------------------------------------------------

    @Test
    void serveAnswersTwoConcurrentStreamedChatsAsItAnswersThemInTurn() throws Exception {
        String first = "Why is the sky blue?", second = "Write a haiku about the sea.";
        try (LiveServe live = new LiveServe(BF16, "--port", "0", "-t", "2", "--backend", "cpu", "--ctx", "512",
                "--parallel", "2")) {
            String alone1 = live.streamedChat(first).get();
            String alone2 = live.streamedChat(second).get();
            assertFalse(alone1.isEmpty() || alone2.isEmpty(), "'" + alone1 + "', '" + alone2 + "'");
            for (int round = 0; round < 2; round++) {
                CompletableFuture<String> together1 = live.streamedChat(first), together2 = live.streamedChat(second);
                assertEquals(alone1, together1.get(), live.log());
                assertEquals(alone2, together2.get(), live.log());
            }
        }
    }
}
