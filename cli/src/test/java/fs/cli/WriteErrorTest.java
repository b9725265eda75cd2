package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.Golden;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** Results that cannot be written: a full disk is one line and exit 1; a reader that went away stops fs quietly. */
class WriteErrorTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    static final List<List<String>> COMMANDS = List.of(
            List.of("inspect", MODEL),
            List.of("inspect", MODEL, "--json"),
            List.of("tokenize", MODEL, "Hello world"),
            List.of("detokenize", MODEL, "9707", "1879"),
            List.of("logits", MODEL, "--tokens", "9707,1879", "-t", "2"),
            List.of("run", MODEL, "--tokens", "9707,1879", "-n", "4", "--temp", "0", "--print-ids", "-t", "2"),
            List.of("run", MODEL, "-p", "Hello", "-n", "4", "--temp", "0", "-t", "2"),
            List.of("--help"),
            List.of("--version"));

    @ParameterizedTest
    @FieldSource("COMMANDS")
    void aFullDiskIsOneLineAndExitOne(List<String> command) throws IOException {
        // /dev/full fails every write with ENOSPC, as a full disk does.
        StringWriter err = new StringWriter();
        int exit;
        try (OutputStream full = new FileOutputStream("/dev/full")) {
            exit = Main.execute(Main.strictOutput(full), new PrintWriter(err), command.toArray(String[]::new));
        }
        assertEquals(1, exit, err.toString());
        assertEquals("fs: cannot write the output: No space left on device", err.toString().strip().lines().toList().getLast());
        assertTrue(err.toString().lines().allMatch(line -> line.startsWith("fs: ")), err.toString());
    }

    @Test
    void aClosedPipeStopsGenerationAtOnceAndQuietly(@TempDir Path dir) throws IOException, InterruptedException {
        // A real pipe whose reader leaves after 5 bytes, as in `fs run … | head -c 5`: a named one, because the
        // JDK closes a child process's stdin stream itself when the child exits. The generation is long enough
        // that only stopping at the first failed write keeps the test short; its summary line would say it ran on.
        Path fifo = dir.resolve("pipe");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        Process head = new ProcessBuilder("head", "-c", "5", fifo.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        StringWriter err = new StringWriter();
        int exit;
        try (OutputStream pipe = new FileOutputStream(fifo.toFile())) {
            exit = Main.execute(Main.strictOutput(pipe), new PrintWriter(err),
                    "run", MODEL, "-p", "Hello", "-n", "4000", "--temp", "0", "-t", "2");
        }
        assertEquals(0, head.waitFor());
        assertEquals(Main.BROKEN_PIPE_EXIT, exit, err.toString());
        assertFalse(err.toString().contains("generation:"), "generation went on: " + err);
        assertFalse(err.toString().contains("cannot write"), "a closed pipe is not an error to report: " + err);
        assertTrue(err.toString().lines().allMatch(line -> line.startsWith("fs: ")), err.toString());
    }
}
