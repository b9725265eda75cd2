package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.backend.opencl.OpenClBackend;
import fs.model.Golden;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * llama.cpp's -ngl, --cpu-moe, --n-cpu-moe and -ot on fs run, bench and serve: a split gives the unsplit model's greedy
 * answer on the OpenCL device (PoCL in CI), says its plan in one line, and bench records n_gpu_layers as llama-bench
 * does; a bad value is a usage error before any model is looked for.
 */
class GpuLayersFlagsTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();
    private static final String ABSENT_MODEL = "/nonexistent/model";

    static final List<List<String>> BAD = List.of(
            List.of("-ngl -1", "-ngl must be a number of layers (0 or more), auto or all, got -1"),
            List.of("--gpu-layers many", "-ngl must be a number of layers (0 or more), auto or all, got 'many'"),
            List.of("-ngl 2 --backend cpu", "-ngl 2 puts layers on an OpenCL device: it needs --backend opencl or "
                    + "auto, not cpu"),
            List.of("--n-gpu-layers all --backend java", "-ngl all puts layers on an OpenCL device: it needs "
                    + "--backend opencl or auto, not java"),
            List.of("--n-cpu-moe -1", "--n-cpu-moe must be 0 or more, got -1"),
            List.of("-fitt -5", "-fitt must be 0 or more MiB, got -5"),
            List.of("-ot exps=CUDA0", "-ot exps=CUDA0: fs moves tensors to the CPU only (PATTERN=CPU), not to CUDA0"));

    @ParameterizedTest
    @FieldSource("BAD")
    void aBadValueIsAUsageErrorBeforeTheModelIsLookedFor(List<String> bad) {
        for (List<String> line : List.of(List.of("run", ABSENT_MODEL, "-p", "hi"), List.of("bench", ABSENT_MODEL),
                List.of("serve", ABSENT_MODEL))) {
            String command = line.getFirst();
            List<String> args = new ArrayList<>(line);
            args.addAll(List.of(bad.get(0).split(" ")));
            CliRun run = CliRun.of(args.toArray(String[]::new));
            assertEquals(2, run.exitCode(), command + " " + bad.get(0) + ": " + run.err());
            assertEquals("fs: " + bad.get(1) + " (see 'fs " + command + " --help')", run.err().strip());
        }
    }

    @Test
    void aSplitAnswersAsTheUnsplitModelAndSaysItsPlan() {
        List<String> common = List.of("run", MODEL, "-p", "Hello", "-n", "6", "--temp", "0", "-t", "2", "--backend",
                "opencl");
        CliRun whole = CliRun.of(common.toArray(String[]::new));
        assertEquals(0, whole.exitCode(), whole.err());
        List<String> split = new ArrayList<>(common);
        split.addAll(List.of("-ngl", "1", "--n-cpu-moe", "2")); // a dense model has no experts: as llama.cpp, no error
        CliRun run = CliRun.of(split.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(whole.out(), run.out());
        assertTrue(run.err().contains("fs: -ngl 1: 1/3 layers on opencl ("), run.err());
        assertTrue(run.err().contains(" with 1/2 layers, the rest on cpu ("), run.err());
    }

    /** -fitt alone is -ngl auto with that margin: tiny-tied fits PoCL's memory whole, output included. */
    @Test
    void aFitTargetAloneMeansAuto() {
        CliRun run = CliRun.of("run", MODEL, "-p", "Hello", "-n", "2", "--temp", "0", "-t", "2", "--backend",
                "opencl", "-fitt", "0");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.err().contains("fs: -ngl auto: 3/3 layers on opencl ("), run.err());
    }

    @Test
    void overrideTensorKeepsTheExpertsOnTheCpuAndRefusesAttentionInOneLine() {
        String moe = Golden.modelDir("tiny-moe").toString();
        List<String> common = List.of("run", moe, "-p", "Hello", "-n", "6", "--temp", "0", "-t", "2", "--backend",
                "opencl");
        CliRun whole = CliRun.of(common.toArray(String[]::new));
        assertEquals(0, whole.exitCode(), whole.err());
        List<String> experts = new ArrayList<>(common);
        experts.addAll(List.of("-ot", "ffn_up_exps=CPU", "-ot", "ffn_down_exps=CPU,ffn_gate_exps=CPU"));
        CliRun run = CliRun.of(experts.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(whole.out(), run.out());
        assertTrue(run.err().contains("fs: -ngl all: 4/4 layers on opencl ("), run.err());
        assertTrue(run.err().contains("), the feed-forward of 2 layers on the CPU"), run.err());
        List<String> attention = new ArrayList<>(common);
        attention.addAll(List.of("-ot", "attn_q=CPU"));
        CliRun refused = CliRun.of(attention.toArray(String[]::new));
        assertEquals(1, refused.exitCode(), refused.err());
        assertTrue(refused.err().strip().endsWith("fs: -ot attn_q=CPU matches blk.0.attn_q.weight: fs moves only the "
                + "layers' feed-forward tensors (blk.N.ffn_*) to the CPU, a layer's whole feed-forward block at once"),
                refused.err());
    }

    /**
     * A device that runs out of memory partway through the upload (1 MiB, less than tiny-tied's embedding, by
     * {@link OpenClBackend#MEMORY_LIMIT}): -ngl all fails in one line after its plan's, exit 1, no stack trace; -ngl auto runs on the
     * CPU and answers as the device would have.
     */
    @Test
    void aDeviceOutOfMemoryFailsAFixedSplitInOneLineAndAutoPlansAgain() {
        List<String> common = List.of("run", MODEL, "-p", "Hello", "-n", "6", "--temp", "0", "-t", "2", "--backend",
                "opencl", "-ngl");
        CliRun whole = CliRun.of(concat(common, "all"));
        assertEquals(0, whole.exitCode(), whole.err());
        System.setProperty(OpenClBackend.MEMORY_LIMIT, Long.toString(1L << 20));
        try {
            CliRun fixed = CliRun.of(concat(common, "all"));
            assertEquals(1, fixed.exitCode(), fixed.err());
            List<String> lines = fixed.err().strip().lines().toList();
            assertEquals(List.of("fs: -ngl all: 3/3 layers on opencl ("), lines.stream().limit(lines.size() - 1)
                    .map(l -> l.substring(0, l.indexOf('(') + 1)).toList(), "the plan, then the error: " + lines);
            String error = lines.getLast();
            assertTrue(error.startsWith("fs: -ngl all does not fit opencl ("), error);
            assertTrue(error.contains("): 3/3 layers need "), error);
            assertTrue(error.endsWith("; offload fewer layers with -ngl (-ngl auto would take 0)"), error);
            CliRun auto = CliRun.of(concat(common, "auto"));
            assertEquals(0, auto.exitCode(), auto.err());
            assertEquals(whole.out(), auto.out());
            assertTrue(auto.err().contains("fs: running on the CPU: opencl ("), auto.err());
            assertTrue(auto.err().contains(" ran out of memory: 3/3 layers need "), auto.err());
        } finally {
            System.clearProperty(OpenClBackend.MEMORY_LIMIT);
        }
    }

    private static String[] concat(List<String> args, String last) {
        List<String> all = new ArrayList<>(args);
        all.add(last);
        return all.toArray(String[]::new);
    }

    @Test
    void benchRecordsTheLayersOnTheDevice() throws IOException {
        assertEquals(1, gpuLayers("--backend", "opencl", "-ngl", "1"));
        assertEquals(3, gpuLayers("--backend", "opencl", "-ngl", "99"), "clamped to the layers and the output");
        assertEquals(0, gpuLayers("--backend", "cpu"));
    }

    private static int gpuLayers(String... flags) throws IOException {
        List<String> args = new ArrayList<>(List.of("bench", MODEL, "-p", "4", "-n", "1", "-r", "1",
                "--warmup", "0", "-t", "2",
                "--json"));
        args.addAll(List.of(flags));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        JsonNode tests = new ObjectMapper().readTree(run.out());
        assertEquals(tests.get(0).get("n_gpu_layers"), tests.get(1).get("n_gpu_layers"));
        return tests.get(0).get("n_gpu_layers").intValue();
    }
}
