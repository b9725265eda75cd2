package fs.generate;

/**
 * Where a {@link Scheduler} delivers one request's output. Every method is called on the scheduler's thread, in
 * order: {@code onToken} for each generated token (stop tokens are not passed on), then exactly one of
 * {@code onDone} or {@code onError}, after which the sink is never called again. A sink must return quickly (every
 * sequence of the batch waits for it) and must not block on the scheduler; one that throws from {@code onToken} ends
 * its own request, which then gets {@code onError} with what it threw, and the other requests go on.
 */
public interface TokenSink {
    /**
     * A generated token, as soon as it is chosen, with its log-probabilities when the request asked for them (see
     * {@link Scheduler#submit(int[], SamplingParams, int, int[], int, TokenSink)}); null when it did not.
     */
    void onToken(int id, TokenLogprobs logprobs);

    /** The request ended normally or was cancelled ({@link StopReason#CANCELLED}); {@code stats} counts its work. */
    void onDone(StopReason reason, GenerationStats stats);

    /** The request failed (a forward failed, or this sink threw); nothing more comes. */
    void onError(RuntimeException e);
}
