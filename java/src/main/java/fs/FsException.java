package fs;

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
}
