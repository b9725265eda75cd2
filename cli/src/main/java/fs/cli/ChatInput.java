package fs.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.function.BooleanSupplier;

/** Where {@code fs chat}'s lines come from: the terminal (line editing, history, Ctrl-C) or a pipe. */
interface ChatInput extends AutoCloseable {

    /** Ctrl-C at the prompt, with what had been typed of the line. */
    final class Interrupted extends Exception {
        private final String partialLine;

        Interrupted(String partialLine) {
            super("Ctrl-C at the prompt", null, false, false);
            this.partialLine = partialLine;
        }

        String partialLine() {
            return partialLine;
        }
    }

    /** Shows {@code prompt} and reads a line; null at the end of the input. */
    String readLine(String prompt) throws IOException, Interrupted;

    /** Whether a line is already waiting, so that reading it will not wait for the user. */
    boolean hasTypedAhead() throws IOException;

    /**
     * A new stop request, which Ctrl-C makes from now until the next one is asked for: an answer being generated
     * stops at its next token. Piped input never makes it: there Ctrl-C ends fs, as it does outside the chat.
     */
    BooleanSupplier stopOnCtrlC();

    @Override
    void close();

    /** The terminal when stdin and stderr (where the prompt goes) are one, else the lines of stdin. */
    static ChatInput open(PrintWriter err) {
        ChatInput terminal = TerminalInput.openSystem();
        return terminal != null ? terminal : new PipedInput(System.in, err);
    }
}
