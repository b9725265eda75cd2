package fs.cli;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;

/**
 * {@code fs chat}'s lines from the terminal, through JLine: line editing, the history of this session (up and down
 * arrows), Ctrl-C. The prompt and the echo go to stderr's terminal, so that stdout carries only answers, as when
 * piped.
 */
final class TerminalInput implements ChatInput {
    private final Terminal terminal;
    private final LineReader reader;
    private volatile AtomicBoolean ctrlC = new AtomicBoolean();

    TerminalInput(Terminal terminal) {
        this.terminal = terminal;
        this.reader = LineReaderBuilder.builder()
                .terminal(terminal)
                // A message is plain text: no shell-like "!!" history expansion, which also drops backslashes.
                .option(LineReader.Option.DISABLE_EVENT_EXPANSION, true)
                // A paste of several lines is one message (bracketed paste), shown as a block's lines are.
                .variable(LineReader.SECONDARY_PROMPT_PATTERN, ChatReader.BLOCK_PROMPT)
                .build();
        // While no line is read (an answer is being generated) Ctrl-C requests a stop; while one is, the reader
        // takes Ctrl-C over and puts this handler back afterwards.
        terminal.handle(Terminal.Signal.INT, signal -> ctrlC.set(true));
    }

    /**
     * The terminal of stdin and stderr, or null when either is not one (a pipe, a file, no terminal at all) or the
     * terminal is a dumb one (TERM=dumb, as in Emacs' shell), which edits lines itself: the chat then reads lines as
     * from a pipe.
     */
    static TerminalInput openSystem() {
        Terminal terminal;
        try {
            // dumb(false): where there is no terminal, JLine throws instead of warning and offering a dumb one.
            terminal = TerminalBuilder.builder()
                    .system(true)
                    .systemOutput(TerminalBuilder.SystemOutput.SysErr)
                    .dumb(false)
                    .build();
        } catch (IOException | IllegalStateException e) {
            return null;
        }
        if (terminal.getType().startsWith(Terminal.TYPE_DUMB)) { // TYPE_DUMB_COLOR too
            close(terminal);
            return null;
        }
        return new TerminalInput(terminal);
    }

    @Override
    public String readLine(String prompt) throws Interrupted {
        try {
            return reader.readLine(prompt);
        } catch (UserInterruptException e) {
            Thread.interrupted(); // the reader ends the read by interrupting this thread, and may leave the flag set
            newLine();
            throw new Interrupted(e.getPartialLine());
        } catch (EndOfFileException e) {
            newLine();
            return null;
        }
    }

    /** Ends the prompt's line, so that what comes next (a new prompt, the shell's) starts a line of its own. */
    private void newLine() {
        terminal.writer().println();
        terminal.writer().flush();
    }

    @Override
    public boolean hasTypedAhead() {
        return false; // whatever was typed ahead, the first answer gains from a warm-up while it is edited
    }

    @Override
    public BooleanSupplier stopOnCtrlC() {
        AtomicBoolean fresh = new AtomicBoolean();
        ctrlC = fresh;
        return fresh::get;
    }

    @Override
    public void close() {
        close(terminal);
    }

    private static void close(Terminal terminal) {
        try {
            terminal.close(); // puts the terminal's settings and signal handlers back
        } catch (IOException e) {
            // nothing is left to restore, or nothing can be done about it
        }
    }
}
