package fs.cli;

import java.nio.file.Path;

/**
 * A weights file was truncated or written to while fs had it mapped: whatever was computed from it since is wrong, so
 * the command ends. Not an FsException, which a chat turn may drop and go on from: nothing can go on from this.
 */
final class ModelFileChangedException extends RuntimeException {
    ModelFileChangedException(Path file, Throwable cause) {
        super(file + " changed or was truncated while in use; run again once it is complete", cause);
    }
}
