package fs.cli;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Standard output for the CLI: a write that fails throws {@link WriteFailedException} rather than being swallowed
 * (PrintWriter and PrintStream keep only a flag nobody reads), so the command stops at once, as a Unix tool does.
 */
final class StrictOutputStream extends FilterOutputStream {

    /** Writing the results failed; {@link #brokenPipe()} tells a reader that went away from a real failure. */
    static final class WriteFailedException extends RuntimeException {
        WriteFailedException(IOException cause) {
            super(cause.getMessage(), cause);
        }

        /** The reading end of a pipe closed (`fs run … | head`): the JVM ignores SIGPIPE, so EPIPE comes here. */
        boolean brokenPipe() {
            return "Broken pipe".equals(getMessage());
        }

        /** The operating system's words, e.g. "No space left on device". */
        String reason() {
            return getMessage() != null ? getMessage() : "an input/output error";
        }
    }

    StrictOutputStream(OutputStream out) {
        super(out);
    }

    @Override
    public void write(int b) {
        try {
            out.write(b);
        } catch (IOException e) {
            throw new WriteFailedException(e);
        }
    }

    @Override
    public void write(byte[] bytes, int offset, int length) {
        try {
            out.write(bytes, offset, length);
        } catch (IOException e) {
            throw new WriteFailedException(e);
        }
    }

    @Override
    public void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            throw new WriteFailedException(e);
        }
    }
}
