package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.engine.Engine;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.source.ModelSource;
import java.io.PrintWriter;
import java.io.Writer;
import org.junit.jupiter.api.Test;

/**
 * The model commands load through the {@link Engine}: the context their load line reports is the engine's default
 * when --ctx is not given, and --ctx is the engine's to check, for the one-sequence commands (through
 * {@link ModelOptions}) and for bench --parallel, which runs a scheduler instead.
 */
class EngineLoadingTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    private static ModelConfig config() {
        try (ModelSource source = Engine.open(MODEL, new PrintWriter(Writer.nullWriter()))) {
            return source.config();
        }
    }

    private static String loadLine(CliRun run) {
        return run.err().lines().filter(line -> line.contains(" layers, context ")).findFirst().orElse(run.err());
    }

    @Test
    void aOneSequenceCommandGetsTheEnginesDefaultContext() {
        CliRun run = CliRun.of("run", MODEL, "-p", "Hello", "-n", "1", "-t", "1", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(loadLine(run).contains(", context " + Engine.defaultContextLength(config()) + ", on "),
                run.err());
    }

    @Test
    void benchParallelGetsTheEnginesDefaultContextAndItsCheck() {
        CliRun run = CliRun.of("bench", MODEL, "--parallel", "1", "-n", "2", "-r", "1",
                "--warmup", "0", "-t", "1", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(loadLine(run).contains(", context " + Engine.defaultContextLength(config()) + ", on "),
                run.err());
        int max = config().maxPositionEmbeddings();
        CliRun tooLong = CliRun.of("bench", MODEL, "--parallel", "1", "-n", "2", "--ctx", Integer.toString(max + 1));
        assertEquals(1, tooLong.exitCode(), tooLong.err());
        assertTrue(tooLong.err().strip().endsWith("--ctx " + (max + 1) + " is out of range: this model allows 1.."
                + max + " positions"), tooLong.err());
    }

    @Test
    void anUnknownBackendIsOneLineNamingTheChoices() {
        CliRun run = CliRun.of("run", MODEL, "-p", "Hello", "-n", "1", "--backend", "gpu");
        assertEquals(2, run.exitCode(), run.err());
        assertEquals("fs: invalid value for --backend: 'gpu' is not a backend; choose one of auto, cpu, java, opencl "
                + "(see 'fs run --help')", run.err().strip());
    }
}
