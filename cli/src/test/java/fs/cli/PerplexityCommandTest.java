package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.backend.cpu.VectorBackend;
import fs.gguf.QTied;
import fs.model.DecoderModel;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fs perplexity end to end on q-tied's GGUF files. The text, eval/eval-head.txt, is the first 2.5 KB of the trained
 * model's held-out eval.txt (Python's weakref sources, 650 tokens for q-tied's tokenizer), copied so that the test
 * reads real text without reaching outside the repository.
 */
class PerplexityCommandTest {
    private static final String BF16 = QTied.gguf("BF16").toString();
    private static final ObjectMapper JSON = new ObjectMapper();

    /** fs-core's test text, as a file (through fs.repo: in fs-core's test-jar it is no file). */
    private static Path text() {
        return Path.of(System.getProperty("fs.repo"), "core", "src", "test", "resources", "eval", "eval-head.txt");
    }

    private static JsonNode perplexity(String... args) throws IOException {
        // The float32 cache, which the references here (float32 sequences, goldens) use.
        String[] command = new String[args.length + 12];
        System.arraycopy(new String[] {"perplexity", "-f", text().toString(), "--json", "-t", "2", "--backend", "cpu",
                "-ctk", "f32", "-ctv", "f32"}, 0, command, 0, 12);
        System.arraycopy(args, 0, command, 12, args.length);
        CliRun run = CliRun.of(command);
        assertEquals(0, run.exitCode(), run.err());
        return JSON.readTree(run.out());
    }

    @Test
    void perplexityIsThatOfTheSecondHalfOfEachWindowFromItsLogits() throws IOException {
        JsonNode result = perplexity(QTied.gguf("Q8_0").toString(), "-c", "64", "--chunks", "3");
        assertEquals(64, result.get("context").intValue());
        assertEquals(3, result.get("windows").intValue());
        assertEquals(3 * 31, result.get("tokens_scored").intValue(), "positions 32..62 of each window");

        // The same figure straight from the model's logits, window by window from an empty cache, in float64.
        String text = Files.readString(text(), StandardCharsets.UTF_8);
        double sum = 0;
        double sumOfSquares = 0;
        int n = 0;
        try (ModelSource source = ModelSource.open(QTied.gguf("Q8_0"));
                VectorBackend backend = new VectorBackend(2)) {
            int[] tokens = source.tokenizer().encode(text.substring(0, text.length() - 1));
            ModelConfig config = source.config();
            SingleSequence model = new SingleSequence(new DecoderModel(config, ModelWeights.bind(config, source.tensors()),
                    backend), SingleSequence.Shape.forEveryPosition(64, 64));
            float[] logits = new float[config.vocabSize()];
            for (int w = 0; w < 3; w++) {
                int[] window = Arrays.copyOfRange(tokens, 64 * w, 64 * (w + 1));
                model.forward(window, 0, Probe.NONE);
                for (int p = 32; p < 63; p++) {
                    model.readLogits(p, logits);
                    double max = Double.NEGATIVE_INFINITY;
                    for (float logit : logits) max = Math.max(max, logit);
                    double denominator = 0;
                    for (float logit : logits) denominator += Math.exp(logit - max);
                    double nll = -Math.log(Math.exp(logits[window[p + 1]] - max) / denominator);
                    sum += nll;
                    sumOfSquares += nll * nll;
                    n++;
                }
            }
        }
        double ppl = Math.exp(sum / n);
        double error = ppl * Math.sqrt((sumOfSquares / n - (sum / n) * (sum / n)) / (n - 1));
        assertEquals(ppl, result.get("ppl").get("value").doubleValue(), 1e-9 * ppl);
        assertEquals(error, result.get("ppl").get("uncertainty").doubleValue(), 1e-6 * error);
    }

    @Test
    void aModelAgainstItselfHasNoDivergence() throws IOException {
        JsonNode plain = perplexity(BF16, "-c", "64");
        JsonNode kl = perplexity(BF16, "-c", "64", "--kl-divergence-base", BF16).get("kl_divergence");
        assertEquals(10, plain.get("windows").intValue(), "650 tokens: 10 windows of 64");
        assertEquals(0, kl.get("kld").get("mean").doubleValue());
        assertEquals(0, kl.get("kld").get("max").doubleValue());
        assertEquals(0, kl.get("delta_p").get("rms").get("value").doubleValue());
        assertEquals(1, kl.get("same_top_p").get("value").doubleValue());
        assertEquals(1, kl.get("ppl_ratio").get("value").doubleValue(), 1e-12);
        double ppl = plain.get("ppl").get("value").doubleValue();
        assertEquals(ppl, kl.get("ppl").get("value").doubleValue(), 1e-12 * ppl);
        assertEquals(ppl, kl.get("base_ppl").get("value").doubleValue(), 1e-12 * ppl);
    }

    @Test
    void fewerBitsDivergeMoreFromTheBase() throws IOException {
        JsonNode plain = perplexity(BF16, "-c", "128", "--chunks", "2");
        JsonNode q8 = perplexity(QTied.gguf("Q8_0").toString(), "-c", "128", "--chunks", "2", "--kl-divergence-base",
                BF16).get("kl_divergence");
        JsonNode q4 = perplexity(QTied.gguf("Q4_0").toString(), "-c", "128", "--chunks", "2", "--kl-divergence-base",
                BF16).get("kl_divergence");
        double basePpl = plain.get("ppl").get("value").doubleValue();
        assertEquals(basePpl, q8.get("base_ppl").get("value").doubleValue(), 1e-12 * basePpl);
        assertEquals(basePpl, q4.get("base_ppl").get("value").doubleValue(), 1e-12 * basePpl);
        double kld8 = q8.get("kld").get("mean").doubleValue();
        double kld4 = q4.get("kld").get("mean").doubleValue();
        assertTrue(kld8 > 0 && kld8 < kld4, "KLD Q8_0 " + kld8 + ", Q4_0 " + kld4);
        assertTrue(q8.get("kld").get("median").doubleValue() <= q8.get("kld").get("p90").doubleValue());
        assertTrue(q8.get("same_top_p").get("value").doubleValue() > q4.get("same_top_p").get("value").doubleValue());
        assertTrue(q8.get("same_top_p").get("uncertainty").doubleValue() > 0);
    }

    @Test
    void theTextReportHasLlamaPerplexitysLines() {
        CliRun run = CliRun.of("perplexity", QTied.gguf("Q4_0").toString(), "-f", text().toString(), "-c", "128",
                "--chunks", "2", "--kl-divergence-base", BF16, "-t", "2", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        String[] lines = run.out().split("\n");
        assertTrue(lines[0].matches("PPL = \\d+\\.\\d{4} ± \\d+\\.\\d{5}"), lines[0]);
        for (String label : new String[] {"Mean PPL(Q)                   : ", "Mean PPL(base)                : ",
                "Mean PPL(Q)/PPL(base)         : ", "Mean    KLD: ", "99.0%   KLD: ", "Median  KLD: ",
                "RMS Δp    : ", "Same top p: ", " 1.0%   Δp: "}) {
            assertTrue(Arrays.stream(lines).anyMatch(line -> line.startsWith(label)), label + " in\n" + run.out());
        }
        assertTrue(run.err().contains("perplexity: 2/2 windows"), run.err());
    }

    @Test
    void aTextShorterThanTwoWindowsIsOneErrorLine() {
        CliRun run = CliRun.of("perplexity", BF16, "-f", text().toString(), "-t", "2", "--backend", "cpu");
        assertEquals(1, run.exitCode());
        assertEquals("", run.out());
        String last = run.err().strip().lines().reduce((a, b) -> b).orElse("");
        assertEquals("fs: -f " + text() + " has only 650 tokens: perplexity with a context of 512 needs at least 1024 "
                + "(two windows); give a longer text or a smaller -c", last);
    }

    @Test
    void aMissingTextIsOneErrorLine(@TempDir Path dir) {
        CliRun run = CliRun.of("perplexity", BF16, "-f", dir.resolve("none.txt").toString());
        assertEquals(1, run.exitCode());
        assertEquals("fs: -f " + dir.resolve("none.txt") + ": no such file", run.err().strip());
    }

    @Test
    void modelsWithDifferentVocabulariesAreNotCompared() {
        String other = Golden.modelDir("tiny-tied").toString(); // Qwen3's full vocabulary
        CliRun run = CliRun.of("perplexity", BF16, "-f", text().toString(), "-c", "64", "--kl-divergence-base", other,
                "-t", "2", "--backend", "cpu");
        assertEquals(1, run.exitCode());
        assertEquals("", run.out());
        String last = run.err().strip().lines().reduce((a, b) -> b).orElse("");
        assertEquals("fs: cannot compare " + BF16 + " with " + other + ": their vocabularies differ (8064 and 151936 "
                + "tokens)", last);
    }

    @Test
    void badCountsAreUsageErrors() {
        CliRun chunks = CliRun.of("perplexity", BF16, "-f", text().toString(), "--chunks", "0");
        assertEquals(2, chunks.exitCode());
        assertTrue(chunks.err().startsWith("fs: --chunks must be at least 1, got 0"), chunks.err());
        CliRun context = CliRun.of("perplexity", BF16, "-f", text().toString(), "-c", "2", "--backend", "cpu");
        assertEquals(2, context.exitCode(), context.err());
        assertTrue(context.err().startsWith("fs: -c must be at least 3"), context.err());
        CliRun noText = CliRun.of("perplexity", BF16);
        assertEquals(2, noText.exitCode());
        assertTrue(noText.err().contains("-f"), noText.err());
    }
}
