package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.gguf.QTied;
import fs.model.Golden;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class BenchCommandTest {
    private final String model = Golden.modelDir("tiny-tied").toString();

    @Test
    void jsonHasOneObjectPerTestWithLlamaBenchFields() throws IOException {
        CliRun run = CliRun.of("bench", model, "-p", "8", "-n", "4", "-r", "2", "--warmup", "0", "-t", "2", "--json");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode tests = new ObjectMapper().readTree(run.out());
        assertTrue(tests.isArray());
        assertEquals(2, tests.size());
        JsonNode pp = tests.get(0);
        JsonNode tg = tests.get(1);
        assertEquals(8, pp.get("n_prompt").intValue());
        assertEquals(0, pp.get("n_gen").intValue());
        assertEquals(0, tg.get("n_prompt").intValue());
        assertEquals(4, tg.get("n_gen").intValue());
        for (JsonNode test : tests) {
            assertEquals(2, test.get("n_threads").intValue());
            assertEquals(2, test.get("samples_ts").size());
            double mean = (test.get("samples_ts").get(0).doubleValue() + test.get("samples_ts").get(1).doubleValue()) / 2;
            assertEquals(mean, test.get("avg_ts").doubleValue(), 1e-9 * mean);
            assertTrue(test.get("avg_ts").doubleValue() > 0);
            assertTrue(test.get("stddev_ts").doubleValue() >= 0);
            assertTrue(test.get("model_filename").textValue().endsWith("tiny-tied"));
            // llama-bench's model_type; tiny-tied is 9.80 million bf16 parameters, stored in as many pairs of bytes
            assertEquals("qwen3 10M BF16", test.get("model_type").textValue());
            assertEquals(9_798_016L, test.get("model_n_params").longValue());
            assertEquals(2 * 9_798_016L, test.get("model_size").longValue());
            assertTrue(test.hasNonNull("backends"));
        }
    }

    /** The backend column says which kernels multiply this model's weights: float ones for BF16, int8 for blocks. */
    @Test
    void theBackendSaysWhatRunsForTheModelsWeights() throws IOException {
        String bf16 = backendOf(model);
        String q4km = backendOf(QTied.gguf("Q4_K_M").toString());
        if (bf16.startsWith("cpu (native ")) {
            assertTrue(bf16.matches("cpu \\(native \\w+ float matmul, Vector API .*"), bf16);
            assertTrue(q4km.matches("cpu \\(native \\w+ int8 (and float )?matmul, .*"), q4km);
        } else {
            assertTrue(bf16.startsWith("cpu (Vector API, ") && q4km.startsWith("cpu (Vector API, "), bf16 + "; " + q4km);
        }
    }

    private static String backendOf(String model) throws IOException {
        CliRun run = CliRun.of("bench", model, "-p", "0", "-n", "1", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend", "cpu", "--json");
        assertEquals(0, run.exitCode(), run.err());
        return new ObjectMapper().readTree(run.out()).get(0).get("backends").textValue();
    }

    @Test
    void tableHasARowPerTest() {
        CliRun run = CliRun.of("bench", model, "-p", "8", "-n", "4", "-r", "1", "--warmup", "0", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        String[] lines = run.out().strip().split("\n");
        assertEquals(4, lines.length, run.out());
        assertTrue(lines[0].contains(" test |") && lines[0].contains("t/s"), lines[0]);
        assertTrue(lines[0].matches("\\| model +\\| +size \\| +params \\| backend .*"), lines[0]);
        assertTrue(lines[2].contains("pp8") && lines[3].contains("tg4"), run.out());
        for (int i = 2; i < 4; i++) {
            assertTrue(lines[i].matches("\\| qwen3 10M BF16 +\\| +18\\.7 MiB \\| +9\\.80 M \\| cpu .*"), lines[i]);
        }
    }

    /** The synopsis names the two forms, not every shared option with the comma lists broken across lines. */
    @Test
    void theUsageShowsBothFormsOnALineEach() {
        CliRun run = CliRun.of("bench", "--help");
        assertEquals(0, run.exitCode(), run.err());
        String[] lines = run.out().split(System.lineSeparator());
        assertEquals("Usage: fs bench [MODEL] [-p N[,N...]] [-n N[,N...]] [-d N[,N...]] [-r N] [OPTIONS]", lines[0]);
        assertEquals("       fs bench [MODEL] --parallel N[,N...] [-n N[,N...]] [-r N] [OPTIONS]", lines[1]);
        assertTrue(run.out().contains("  -p, --n-prompt=N[,N...]"), run.out());
    }

    /**
     * llama-bench's -d: each test again after each depth, named "pp4 @ d32" and with n_depth in the JSON; a depth is
     * filled before its tests, and the tests at a depth are slower than at none only through attention, so what is
     * asserted is the shape of the report and that a depth past the context is the user's error in one line.
     */
    @Test
    void eachDepthRunsTheTestsAgainAfterThatManyPositions() throws IOException {
        CliRun run = CliRun.of("bench", model, "-p", "4", "-n", "2", "-d", "0,32", "-r", "1",
                "--warmup", "0", "-t", "1", "--json");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode tests = new ObjectMapper().readTree(run.out());
        assertEquals(4, tests.size(), run.out());
        int[][] expected = {{4, 0, 0}, {0, 2, 0}, {4, 0, 32}, {0, 2, 32}};
        for (int i = 0; i < expected.length; i++) {
            JsonNode test = tests.get(i);
            assertEquals(expected[i][0], test.get("n_prompt").intValue(), run.out());
            assertEquals(expected[i][1], test.get("n_gen").intValue(), run.out());
            assertEquals(expected[i][2], test.get("n_depth").intValue(), run.out());
            assertTrue(test.get("avg_ts").doubleValue() > 0);
        }
        CliRun table = CliRun.of("bench", model, "-p", "4", "-n", "0", "-d", "32", "-r", "1",
                "--warmup", "0", "-t", "1");
        assertEquals(0, table.exitCode(), table.err());
        assertTrue(table.out().contains("| pp4 @ d32 |") || table.out().contains(" pp4 @ d32 |"), table.out());

        CliRun tooDeep = CliRun.of("bench", model, "-p", "4", "-n", "0", "-d", "100", "--ctx", "64", "-r", "1",
                "--warmup", "0");
        assertEquals(1, tooDeep.exitCode(), tooDeep.out());
        String last = tooDeep.err().strip().lines().reduce((a, b) -> b).orElseThrow();
        assertTrue(last.contains("positions 0..103 do not fit the context of 64 tokens"), tooDeep.err());
        assertTrue(!tooDeep.err().contains("\tat "), tooDeep.err());
        CliRun negative = CliRun.of("bench", model, "-d", "-1");
        assertEquals(2, negative.exitCode(), negative.err());
        assertEquals("fs: -d must be ≥ 0, got -1 (see 'fs bench --help')", negative.err().strip());
    }

    @Test
    void commaSeparatedListsGiveATestPerValue() {
        CliRun run = CliRun.of("bench", model, "-p", "4,8", "-n", "2,0,3", "-r", "1", "--warmup", "0", "-t", "1");
        assertEquals(0, run.exitCode(), run.err());
        String[] lines = run.out().strip().split("\n");
        assertEquals(6, lines.length, run.out());
        assertTrue(lines[2].contains("pp4") && lines[3].contains("pp8"), run.out());
        assertTrue(lines[4].contains("tg2") && lines[5].contains("tg3"), run.out());
    }

    @Test
    void parallelMeasuresEachStreamCountWithAggregateAndPerStreamSpeeds() throws IOException {
        CliRun run = CliRun.of("bench", model, "--parallel", "1,3", "-n", "4", "-r", "2",
                "--warmup", "0", "-t", "2", "--json");
        assertEquals(0, run.exitCode(), run.err());
        JsonNode tests = new ObjectMapper().readTree(run.out());
        assertEquals(2, tests.size());
        assertEquals(1, tests.get(0).get("n_parallel").intValue());
        assertEquals(3, tests.get(1).get("n_parallel").intValue());
        for (JsonNode test : tests) {
            assertEquals(4, test.get("n_gen").intValue());
            assertEquals(2, test.get("samples_ts").size());
            assertEquals(2, test.get("stream_samples_ts").size());
            assertTrue(test.get("avg_ts").doubleValue() > 0 && test.get("stream_avg_ts").doubleValue() > 0);
        }
        // One stream: the aggregate is that stream's speed, measured over its decode (both from the same clock).
        double one = tests.get(0).get("avg_ts").doubleValue(), stream = tests.get(0).get("stream_avg_ts").doubleValue();
        assertEquals(stream, one, 0.2 * stream);
    }

    @Test
    void parallelTableHasARowPerStreamCount() {
        CliRun run = CliRun.of("bench", model, "--parallel", "2", "-n", "3,5", "-r", "1", "--warmup", "0", "-t", "1");
        assertEquals(0, run.exitCode(), run.err());
        String[] lines = run.out().strip().split("\n");
        assertEquals(4, lines.length, run.out());
        assertTrue(lines[0].contains("aggregate t/s") && lines[0].contains("per-stream t/s"), lines[0]);
        assertTrue(lines[2].contains("tg3") && lines[3].contains("tg5"), run.out());
    }

    @Test
    void aBadStreamCountIsOneClearError() {
        CliRun run = CliRun.of("bench", model, "--parallel", "2,0", "-r", "1", "--warmup", "0");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains("--parallel takes stream counts in 1..256, got 2,0"), run.err());
        assertEquals(1, run.err().strip().split("\n").length, run.err());
    }

    @Test
    void aNegativeCountIsOneClearError() {
        CliRun run = CliRun.of("bench", model, "-p", "8,-1", "-r", "1", "--warmup", "0");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains("-p 8,-1"), run.err());
        assertEquals(1, run.err().strip().split("\n").length, run.err());
    }

    @Test
    void aWarmUpOutsideZeroToAnHourIsOneClearError() {
        for (String seconds : new String[] {"-1", "NaN", "3601"}) {
            CliRun run = CliRun.of("bench", model, "-p", "4", "-n", "0", "--warmup", seconds);
            assertEquals(2, run.exitCode(), run.err());
            assertTrue(run.err().contains("--warmup must be between 0 and 3600 seconds"), run.err());
            assertEquals(1, run.err().strip().split("\n").length, run.err());
        }
    }
}
