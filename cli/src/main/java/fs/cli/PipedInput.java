package fs.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/** {@code fs chat}'s lines from a pipe or file, one message a line; the prompt still goes to stderr. */
final class PipedInput implements ChatInput {
    private final BufferedReader in;
    private final PrintWriter err;

    PipedInput(InputStream in, PrintWriter err) {
        this.in = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        this.err = err;
    }

    @Override
    public String readLine(String prompt) throws IOException {
        err.print(prompt);
        err.flush();
        String line = in.readLine();
        if (line == null) err.println(); // as at a terminal's Ctrl-D: what follows (the chat's totals) starts a line
        return line;
    }

    @Override
    public boolean hasTypedAhead() throws IOException {
        return in.ready();
    }

    @Override
    public BooleanSupplier stopOnCtrlC() {
        return () -> false;
    }

    @Override
    public void close() {
        // stdin belongs to the process, not to the chat
    }
}
