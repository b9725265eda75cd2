package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.Golden;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A weights file truncated or rewritten after fs mapped it ends the command with one line naming it, exit 1. */
class ModelFileChangeTest {
    @TempDir
    Path dir;

    /** Something done to the weights file between the model's loading and its first forward. */
    @FunctionalInterface
    private interface Change {
        void apply(Path weights) throws IOException;
    }

    private static final Change TRUNCATE = weights -> {
        try (FileChannel channel = FileChannel.open(weights, StandardOpenOption.WRITE)) {
            channel.truncate(channel.size() / 2);
        }
    };

    /** Same size, other bytes: the shared mapping shows them, and nothing faults. */
    private static final Change OVERWRITE_IN_PLACE = weights -> {
        try (FileChannel channel = FileChannel.open(weights, StandardOpenOption.WRITE)) {
            ByteBuffer garbage = ByteBuffer.allocate(1 << 20);
            while (garbage.hasRemaining()) garbage.put((byte) 0x7f);
            channel.write(garbage.flip(), channel.size() / 2);
        }
    };

    @Test
    void truncatedDuringRunIsOneLineNamingTheFile() throws IOException {
        assertOneLineNamingTheWeights(run(TRUNCATE, null, "run", modelCopy(), "-p", "Hello", "-n", "8", "--temp", "0", "-t", "2"));
    }

    @Test
    void overwrittenInPlaceDuringRunIsOneLineNamingTheFile() throws IOException {
        assertOneLineNamingTheWeights(run(OVERWRITE_IN_PLACE, null, "run", modelCopy(), "-p", "Hello", "-n", "8", "--temp", "0", "-t", "2"));
    }

    @Test
    void truncatedDuringChatIsOneLineNamingTheFile() throws IOException {
        assertOneLineNamingTheWeights(run(TRUNCATE, "Hello\n", "chat", modelCopy(), "-n", "8", "--temp", "0", "-t", "2"));
    }

    @Test
    void overwrittenInPlaceDuringChatIsOneLineNamingTheFile() throws IOException {
        assertOneLineNamingTheWeights(run(OVERWRITE_IN_PLACE, "Hello\nHello again\n", "chat", modelCopy(), "-n", "8", "--temp", "0", "-t", "2"));
    }

    private void assertOneLineNamingTheWeights(CliRun run) {
        assertEquals(1, run.exitCode(), run.err());
        assertEquals("", run.out(), "nothing computed from the changed file is printed");
        // chat's "> " prompt is on stderr too, and the line may follow it.
        List<String> lines = run.err().strip().lines().map(line -> line.replaceFirst("^(> )+", "")).toList();
        assertEquals("fs: " + dir.resolve("model.safetensors") + " changed or was truncated while in use; run again once it "
                + "is complete", lines.getLast(), run.err());
        assertTrue(lines.stream().allMatch(line -> line.startsWith("fs: ")),
                "no stack trace: " + run.err());
    }

    /** A copy of tiny-untied whose weights file was last modified long ago, so that any write shows in its time. */
    private String modelCopy() throws IOException {
        Path source = Golden.modelDir("tiny-untied");
        for (String file : List.of("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                "model.safetensors")) {
            Files.copy(source.resolve(file), dir.resolve(file));
        }
        Files.setLastModifiedTime(dir.resolve("model.safetensors"), FileTime.fromMillis(1_000_000_000_000L));
        return dir.toString();
    }

    /** Runs fs, applying {@code change} as soon as the model is loaded (fs logs that line before any forward). */
    private CliRun run(Change change, String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Writer changingErr = new Writer() {
            private boolean changed;

            @Override
            public void write(char[] chars, int offset, int length) throws IOException {
                err.write(chars, offset, length);
                if (!changed && err.toString().contains(" layers, context ")) {
                    changed = true;
                    change.apply(dir.resolve("model.safetensors"));
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        InputStream original = System.in;
        if (stdin != null) System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        try {
            int exit = Main.execute(new PrintWriter(out), new PrintWriter(changingErr), args);
            return new CliRun(exit, out.toString(), err.toString());
        } finally {
            System.setIn(original);
        }
    }
}
