package fs.cli;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C (SIGINT) as a request to stop, while it is open: {@code fs run} ends its answer where it is and still prints
 * the final newline and its speeds, as llama-cli prints its timings. A second Ctrl-C ends the process at once (a
 * forward of a large model can take a while). Closing puts back the handler there was before.
 */
final class CtrlC implements BooleanSupplier, AutoCloseable {
    /** What a Unix tool ended by SIGINT reports (128 + 2), so that a script can tell an interrupted run. */
    static final int EXIT = 130;

    private static final Signal INT = new Signal("INT");

    private final AtomicBoolean requested = new AtomicBoolean();
    private final SignalHandler previous;

    CtrlC() {
        // sun.misc.Signal (jdk.unsupported, kept by JEP 260 for this): a shutdown hook could not let the answer end
        // and the command return normally.
        SignalHandler before;
        try {
            before = Signal.handle(INT, signal -> {
                if (!requested.compareAndSet(false, true)) Runtime.getRuntime().halt(EXIT);
            });
        } catch (IllegalArgumentException e) {
            before = null; // a JVM that leaves SIGINT alone (-Xrs): Ctrl-C ends the process as it would anyway
        }
        previous = before;
    }

    /** Whether Ctrl-C was pressed. */
    @Override
    public boolean getAsBoolean() {
        return requested.get();
    }

    @Override
    public void close() {
        if (previous != null) Signal.handle(INT, previous);
    }
}
