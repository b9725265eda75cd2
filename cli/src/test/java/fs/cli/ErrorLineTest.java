package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Errors, which picocli's handler lets by, are one line too: said in plain words where there are any. */
class ErrorLineTest {
    @Test
    void everyKindOfErrorIsOneLine() {
        List<Throwable> errors = List.of(new OutOfMemoryError("Java heap space"), new StackOverflowError(),
                new InternalError("a fault occurred in an unsafe memory access operation"));
        for (Throwable e : errors) {
            String line = Main.describe(e);
            assertEquals(1, line.lines().count(), line);
            assertTrue(line.contains("FS_DEBUG=1") || line.contains("FS_JAVA_OPTS"), line);
        }
        assertTrue(Main.describe(new StackOverflowError()).startsWith("internal error: the stack overflowed"));
        assertTrue(Main.describe(new OutOfMemoryError("Java heap space")).startsWith("out of memory (Java heap space)"));
    }
}
