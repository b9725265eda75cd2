package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.Golden;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** Flag values no command could use are usage errors (exit 2), found before any model is looked for. */
class FlagValidationTest {
    /** Loading this would fail with its own message; a flag error must come first. */
    private static final String ABSENT_MODEL = "/nonexistent/model";

    static final List<List<String>> BAD_FLAGS = List.of(
            List.of("--temp", "-1", "invalid value for --temp: temperature must be a finite number ≥ 0, got -1.0"),
            List.of("--temp", "NaN", "invalid value for --temp: temperature must be a finite number ≥ 0, got NaN"),
            List.of("--top-p", "2", "invalid value for --top-p: top-p must be in (0, 1] (1 disables it), got 2.0"),
            List.of("--top-p", "0", "invalid value for --top-p: top-p must be in (0, 1] (1 disables it), got 0.0"),
            List.of("--top-k", "-1", "invalid value for --top-k: top-k must be ≥ 0 (0 disables it), got -1"),
            List.of("--min-p", "1.5", "invalid value for --min-p: min-p must be in [0, 1] (0 disables it), got 1.5"),
            List.of("--repeat-penalty", "0", "invalid value for --repeat-penalty: repeat penalty must be a finite "
                    + "number > 0 (1 disables it), got 0.0"),
            List.of("--presence-penalty", "3", "invalid value for --presence-penalty: presence penalty must be a "
                    + "number in [-2, 2] (0 disables it), got 3.0"),
            List.of("--frequency-penalty", "-2.5", "invalid value for --frequency-penalty: frequency penalty must be a "
                    + "number in [-2, 2] (0 disables it), got -2.5"),
            List.of("--frequency-penalty", "NaN", "invalid value for --frequency-penalty: frequency penalty must be a "
                    + "number in [-2, 2] (0 disables it), got NaN"),
            List.of("-t", "0", "-t/--threads must be between 1 and 1024, got 0"),
            List.of("--threads", "5000", "-t/--threads must be between 1 and 1024, got 5000"),
            List.of("-n", "-2", "-n must be ≥ 0, or -1 for no limit; got -2"));

    @ParameterizedTest
    @FieldSource("BAD_FLAGS")
    void aBadValueIsAUsageErrorBeforeTheModelLoads(List<String> flag) {
        for (List<String> command : List.of(List.of("run", ABSENT_MODEL, "-p", "hi"), List.of("chat", ABSENT_MODEL))) {
            List<String> args = new ArrayList<>(command);
            args.addAll(flag.subList(0, 2));
            CliRun run = CliRun.of(args.toArray(String[]::new));
            assertEquals(2, run.exitCode(), run.err());
            assertEquals("fs: " + flag.get(2) + " (see 'fs " + command.getFirst() + " --help')", run.err().strip());
        }
    }

    @Test
    void threadCountsAreCheckedForEveryModelCommand() {
        for (List<String> command : List.of(List.of("logits", ABSENT_MODEL, "--tokens", "1", "-t", "2000"),
                List.of("bench", ABSENT_MODEL, "-t", "2000"))) {
            CliRun run = CliRun.of(command.toArray(String[]::new));
            assertEquals(2, run.exitCode(), run.err());
            assertTrue(run.err().startsWith("fs: -t/--threads must be between 1 and 1024, got 2000"), run.err());
        }
    }

    @Test
    void moreThreadsThanProcessorsRunWithANote() {
        int processors = Runtime.getRuntime().availableProcessors();
        CliRun run = CliRun.of("run", Golden.modelDir("tiny-tied").toString(), "--tokens", "9707", "-n", "2",
                "--temp", "0", "--print-ids", "-t", Integer.toString(processors + 1));
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.err().lines().anyMatch(line -> line.equals("fs: note: " + (processors + 1) + " threads on "
                + processors + " available processors: the extra threads wait for a core, which is usually slower")),
                run.err());
    }
}
