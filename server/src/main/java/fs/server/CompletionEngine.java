package fs.server;

import fs.generate.TokenConstraint;
import fs.generate.TokenSink;
import fs.generate.SamplingParams;

/**
 * What the HTTP layer needs from whatever runs the model: it takes a prompt's token ids and streams the generated ids
 * to a {@link TokenSink}. Implementations decide how requests share the model (one at a time, or many sequences in
 * one forward); the HTTP layer never sees a model or a generator. Safe to call from any thread.
 */
public interface CompletionEngine extends AutoCloseable {

    /**
     * Queues a generation of up to {@code maxTokens} tokens (negative: until a stop token or the end of the context)
     * from {@code prompt}, whose length plus {@code maxTokens} the caller checked against {@link #contextLength()}.
     * The sink hears every token, then exactly one of onDone or onError, always on the engine's thread. Each token
     * comes with its {@link fs.generate.TokenLogprobs} and {@code topLogprobs} alternatives (0..20), or with null when
     * {@code topLogprobs} is -1. With a {@code constraint} (null: none), this request's own, only the tokens it allows
     * are sampled; it is touched on the engine's thread only.
     *
     * @throws UnavailableException when every slot is busy and the waiting queue is full, or the engine is closed
     *     (nothing was queued)
     */
    Handle submit(int[] prompt, SamplingParams params, int maxTokens, int topLogprobs, TokenConstraint constraint,
            TokenSink sink);

    /** The tokens that end an answer: a constraint lets them through where its grammar may end. */
    int[] stopIds();

    /** Positions in each sequence's KV cache: a prompt plus its tokens must fit. */
    int contextLength();

    /** How busy the engine is now, for /metrics. */
    Load load();

    /**
     * Stops taking requests, ends the running and the queued ones (they finish with
     * {@link fs.generate.StopReason#CANCELLED}; a queued one with no tokens), and waits for the engine's thread to end.
     */
    @Override
    void close();

    /** A submitted request. */
    interface Handle {
        /**
         * Asks the engine to stop this request (the client went away, or a stop string was found): at the latest
         * before its next token it ends with {@link fs.generate.StopReason#CANCELLED}. Idempotent, any thread.
         */
        void cancel();
    }

    /**
     * @param slots  requests that can run at once
     * @param busy   requests running now
     * @param queued requests waiting for a slot
     */
    record Load(int slots, int busy, int queued) {}

    /** The engine cannot take or finish a request now (its queue is full, or it shuts down): HTTP 503, retry later. */
    final class UnavailableException extends RuntimeException {
        public UnavailableException(String message) {
            super(message);
        }
    }
}
