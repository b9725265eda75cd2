package fs.cli;

import fs.generate.Generator;
import fs.source.ModelSource;
import java.nio.file.Path;

/**
 * A weights file was truncated or written to while fs had it mapped: whatever was computed from it since is wrong, so
 * the command ends. Not an FsException, which a chat turn may drop and go on from: nothing can go on from this.
 */
final class ModelFileChangedException extends RuntimeException {
    ModelFileChangedException(Path file, Throwable cause) {
        super(file + " changed or was truncated while in use; run again once it is complete", cause);
    }

    /**
     * Throws this when a weights file of {@code source} was truncated or written to since it was mapped: the mapping
     * is shared, so the model would go on computing with other bytes (one stat() per file, microseconds).
     */
    static void checkUnchanged(ModelSource source) {
        source.changedFile().ifPresent(file -> {
            throw new ModelFileChangedException(file, null);
        });
    }

    /** {@code listener}, with the weights of {@code source} checked unchanged before each token reaches it. */
    static Generator.TokenListener watching(ModelSource source, Generator.TokenListener listener) {
        return id -> {
            checkUnchanged(source);
            listener.onToken(id);
        };
    }
}
