package fs.api;

import java.util.ArrayList;
import java.util.List;

/**
 * Lets another thread stop an answer: pass it to {@link Chat#send(String, TokenConsumer, Cancellation)} and call
 * {@link #cancel} from anywhere. The answer then ends before its next token with
 * {@link StopReason#CANCELLED}, keeping what was generated so far. Once cancelled it stays cancelled: a
 * send given it afterwards ends at once.
 */
public final class Cancellation {
    // Guarded by this: the generations to stop, registered by send while they run.
    private final List<Runnable> hooks = new ArrayList<>();
    private boolean cancelled;

    /** A cancellation that has not been cancelled. */
    public Cancellation() {}

    /** Stops every answer this was given to; any thread, returns at once, idempotent. */
    public void cancel() {
        List<Runnable> toRun;
        synchronized (this) {
            if (cancelled) return;
            cancelled = true;
            toRun = List.copyOf(hooks);
            hooks.clear();
        }
        for (Runnable hook : toRun) hook.run();
    }

    /** Whether {@link #cancel} was called. */
    public synchronized boolean isCancelled() {
        return cancelled;
    }

    /** Runs {@code hook} at cancel (now, if already cancelled); the returned runnable unregisters it. */
    Runnable register(Runnable hook) {
        synchronized (this) {
            if (!cancelled) {
                hooks.add(hook);
                return () -> {
                    synchronized (this) {
                        hooks.remove(hook);
                    }
                };
            }
        }
        hook.run();
        return () -> {};
    }
}
