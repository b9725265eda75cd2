package fs.generate;

import fs.model.ForwardBuffers;

/**
 * Chooses a sequence's next token from its row of logits: on the device when greedy without any penalty and without
 * logprobs (no logits cross to the host), else on the host with the sequence's {@link Sampler}, whose penalties see
 * the tokens so far. One per sequence (its sampler's random stream is the sequence's own). Not thread-safe.
 */
final class TokenPicker {
    private final Sampler sampler;
    private final boolean argmaxOnDevice;
    private final TokenLogprobs.Calculator logprobs; // null: not asked
    private float[] logits;
    private TokenLogprobs lastLogprobs;

    /** A picker with {@code params} that also computes logprobs with {@code topLogprobs} alternatives (-1: none). */
    TokenPicker(SamplingParams params, int topLogprobs) {
        TokenLogprobs.checkTop(topLogprobs);
        this.sampler = new Sampler(params);
        this.logprobs = topLogprobs >= 0 ? new TokenLogprobs.Calculator(topLogprobs) : null;
        this.argmaxOnDevice = params.isGreedy() && !params.hasPenalty() && logprobs == null;
    }

    /**
     * The next token from logits row {@code index} of the last forward into {@code buffers}, given the tokens so far
     * ({@code history}), of which those from {@code generatedFrom} on were generated.
     */
    int pick(ForwardBuffers buffers, int index, SlotTokens history, int generatedFrom, int vocab) {
        if (argmaxOnDevice) return buffers.argmax(index);
        if (logits == null) logits = new float[vocab];
        buffers.readLogits(index, logits);
        int token = sampler.sample(logits, history.array(), history.length(), generatedFrom);
        // The raw logits: the sampler never modifies them.
        if (logprobs != null) lastLogprobs = logprobs.of(logits, token);
        return token;
    }

    /** The logprobs of the token {@link #pick} chose last; null when none were asked for. */
    TokenLogprobs lastLogprobs() {
        return lastLogprobs;
    }
}
