package fs;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * A problem the user can act on: bad input, a missing model, a corrupt file. The CLI prints its message as one line
 * on stderr and exits non-zero, never a stack trace, so the message must say what went wrong and where.
 */
public class FsException extends RuntimeException {
    public FsException(String message) {
        super(message);
    }

    public FsException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The one line for a file that could not be opened or read: missing, forbidden, or the system's reason. */
    public static FsException cannotRead(Path path, IOException e) {
        if (e instanceof NoSuchFileException) return new FsException(path + ": no such file");
        if (e instanceof AccessDeniedException) return new FsException(path + ": permission denied");
        return new FsException(path + ": cannot read: " + e.getMessage(), e);
    }
}
