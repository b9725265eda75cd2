package fs.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.tensor.DType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM ended by a signal while it writes (Ctrl-C's SIGINT, or SIGTERM, which {@link Process#destroy()} sends and
 * the JVM handles the same way) leaves neither the target nor its temporary file: the writing thread never unwinds,
 * so only the JVM's exit can delete it.
 */
class GgufFileWriterExitTest {
    @TempDir
    Path dir;

    /** The child: starts a file, writes half of it, says so, and waits to be killed. */
    public static void main(String[] args) throws InterruptedException {
        var tensor = new GgufFileWriter.TensorInfo("t", DType.F32, new long[] {1 << 20});
        GgufFileWriter writer = GgufFileWriter.create(Path.of(args[0]), Map.of(), List.of(tensor));
        writer.write(MemorySegment.ofArray(new byte[2 << 20]));
        System.out.println("writing");
        System.out.flush();
        Thread.sleep(60_000);
    }

    @Test
    void aSignalledJvmLeavesNoFile() throws IOException, InterruptedException {
        Path target = dir.resolve("out.gguf");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                GgufFileWriterExitTest.class.getName(), target.toString()).redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            assertEquals("writing", out.readLine());
            try (Stream<Path> files = Files.list(dir)) {
                assertTrue(files.anyMatch(p -> p.getFileName().toString().endsWith(".partial")));
            }
            child.destroy();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        } finally {
            child.destroyForcibly();
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        }
    }
}
