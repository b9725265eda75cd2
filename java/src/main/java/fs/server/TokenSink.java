package fs.server;

import fs.generate.GenerationStats;
import fs.generate.StopReason;

/**
 * Receives one request's generated tokens from a {@link CompletionEngine}. Every call comes from the engine's thread,
 * in order: the tokens, then exactly one of {@link #onDone} or {@link #onError}. A sink must return quickly (it holds
 * up the engine, and in a batched engine every other sequence too): hand the work to another thread.
 */
public interface TokenSink {
    /** A generated token (stop tokens are not passed on). */
    void onToken(int id);

    /** The generation ended; {@code stats} counts its prompt and generated tokens. */
    void onDone(StopReason reason, GenerationStats stats);

    /** The generation failed, or the engine shut down before the request ran. */
    void onError(RuntimeException e);
}
