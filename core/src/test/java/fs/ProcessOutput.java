package fs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/** What a child process writes, read for the tests that run one (fs's launcher, the README's commands, node). */
public final class ProcessOutput {
    private ProcessOutput() {}

    /** All of {@code stream} as UTF-8, read on another thread (a pipe not read fills and stops the process). */
    public static CompletableFuture<String> text(InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try (stream) {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
