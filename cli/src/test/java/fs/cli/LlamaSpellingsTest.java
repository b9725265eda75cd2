package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.Golden;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/** llama-cli's spellings work as aliases; help, version and defaults are where a user looks for them. */
class LlamaSpellingsTest {
    private static final String MODEL = Golden.modelDir("tiny-untied").toString();

    private static CliRun withStdin(String stdin, String... args) {
        InputStream original = System.in;
        System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        try {
            return CliRun.of(args);
        } finally {
            System.setIn(original);
        }
    }

    private static String ids(CliRun run) {
        assertEquals(0, run.exitCode(), run.err());
        return run.out();
    }

    @Test
    void llamaCppOptionNamesMeanWhatFsNamesMean() {
        String fs = ids(CliRun.of("run", MODEL, "-p", "Hello", "--system", "Be brief.", "--ctx", "64", "--seed", "7",
                "--temp", "0.8", "-n", "6", "--print-ids", "-t", "2"));
        String llama = ids(CliRun.of("run", "-m", MODEL, "-p", "Hello", "-sys", "Be brief.", "-c", "64", "-s", "7",
                "--temp", "0.8", "--n-predict", "6", "--print-ids", "-t", "2"));
        String longNames = ids(CliRun.of("run", "--model", MODEL, "-p", "Hello", "--system-prompt", "Be brief.",
                "--ctx-size", "64", "-s", "7", "--temp", "0.8", "-n", "6", "--print-ids", "-t", "2"));
        assertEquals(fs, llama);
        assertEquals(fs, longNames);
    }

    @Test
    void thePromptComesFromAFileOrFromStdin(@TempDir Path dir) throws IOException {
        String fromFlag = ids(CliRun.of("run", MODEL, "-p", "Hello\nthere", "-n", "6", "--temp", "0", "--print-ids", "-t", "2"));
        Path file = dir.resolve("prompt.txt");
        Files.writeString(file, "Hello\nthere\n"); // the final newline ends the file, not the message
        assertEquals(fromFlag, ids(CliRun.of("run", MODEL, "-f", file.toString(), "-n", "6", "--temp", "0", "--print-ids", "-t", "2")));
        assertEquals(fromFlag, ids(withStdin("Hello\nthere\n", "run", MODEL, "-p", "-", "-n", "6", "--temp", "0", "--print-ids", "-t", "2")));

        CliRun missing = CliRun.of("run", MODEL, "-f", dir.resolve("absent.txt").toString());
        assertEquals(1, missing.exitCode());
        assertEquals("fs: -f " + dir.resolve("absent.txt") + ": no such file", missing.err().strip());
        CliRun both = CliRun.of("run", MODEL, "-p", "Hello", "-f", file.toString());
        assertEquals(1, both.exitCode());
        assertEquals("fs: give one of -p PROMPT, -f FILE or --tokens IDS", both.err().strip());
    }

    @Test
    void ngllIsExplainedInOneLine() {
        CliRun run = CliRun.of("run", MODEL, "-p", "Hello", "-ngl", "99");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().startsWith("fs: -ngl is llama.cpp's: fs runs every layer on one backend"), run.err());
        assertEquals(1, run.err().strip().lines().count(), run.err());
    }

    @Test
    void theModelIsNamedOnce() {
        CliRun run = CliRun.of("run", MODEL, "-m", "other/model", "-p", "Hello");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().startsWith("fs: the model is named twice"), run.err());
    }

    @Test
    void helpCommandShowsTheCommandsHelp() {
        for (String command : List.of("run", "chat", "inspect", "bench")) {
            CliRun help = CliRun.of("help", command);
            assertEquals(0, help.exitCode(), help.err());
            assertEquals(CliRun.of(command, "--help").out(), help.out());
            assertTrue(help.out().startsWith("Usage: fs " + command), help.out());
        }
    }

    @Test
    void versionNamesTheProjectVersionAndCommit() {
        CliRun run = CliRun.of("--version");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().strip().matches("fs \\d+\\.\\d+\\.\\d+\\S* \\((commit [0-9a-f]{7,40}|unknown commit), Java .+\\)"),
                run.out());
    }

    @Test
    void everyOptionSaysItsDefault() {
        List<String> silent = new ArrayList<>();
        CommandLine fs = new CommandLine(new Main());
        for (CommandLine command : fs.getSubcommands().values()) {
            if (command.getCommand() instanceof CommandLine.HelpCommand) continue; // picocli's own
            CommandSpec spec = command.getCommandSpec();
            for (OptionSpec option : spec.options()) {
                if (option.usageHelp() || option.versionHelp() || option.hidden() || option.arity().max() == 0) continue;
                if (!String.join(" ", option.description()).contains("default")
                        && !String.join(" ", option.description()).contains("required")) {
                    silent.add(spec.name() + " " + option.longestName());
                }
            }
            spec.positionalParameters().stream()
                    .filter(p -> p.required() == false && !p.hidden() && !String.join(" ", p.description()).contains("default")
                            && !String.join(" ", p.description()).contains("stdin"))
                    .forEach(p -> silent.add(spec.name() + " " + p.paramLabel()));
        }
        assertEquals(List.of(), silent, "options whose --help does not say what they default to");
    }
}
