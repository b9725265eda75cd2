package fs.cli;

import fs.generate.Conversation;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The conversation's warm-up ({@link Conversation#warmUp}) on a thread of its own, while the user types the first
 * message at a prompt that already edits lines; the model is the warm-up's until {@link #await} or {@link #stop}.
 */
final class BackgroundWarmUp {
    private final AtomicBoolean stopRequested = new AtomicBoolean();
    private final FutureTask<Void> task;

    private BackgroundWarmUp(Conversation conversation) {
        task = new FutureTask<>(() -> {
            conversation.warmUp(stopRequested::get);
            return null;
        });
    }

    static BackgroundWarmUp start(Conversation conversation) {
        BackgroundWarmUp warmUp = new BackgroundWarmUp(conversation);
        Thread thread = new Thread(warmUp.task, "fs-chat-warm-up");
        thread.setDaemon(true);
        thread.start();
        return warmUp;
    }

    /** Waits for the warm-up to end, and throws what it threw: the model is then free for the first answer. */
    void await() {
        try {
            waitForEnd();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) throw runtime;
            if (e.getCause() instanceof Error error) throw error;
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Stops the warm-up at its next batch or token and waits for it; how it ended no longer matters. */
    void stop() {
        stopRequested.set(true);
        try {
            waitForEnd();
        } catch (ExecutionException e) {
            // the chat is ending: a failed warm-up has nothing left to spoil
        }
    }

    /** Waits even through an interrupt (kept for the caller): the model must not be used or closed before. */
    private void waitForEnd() throws ExecutionException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    task.get();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
