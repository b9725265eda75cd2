package fs.generate;

import fs.model.ForwardBuffers;

/**
 * Chooses a sequence's next token from its row of logits: on the device when greedy without any penalty and without
 * logprobs (no logits cross to the host), else on the host with the sequence's {@link Sampler}, whose penalties see
 * the tokens so far. One per sequence (its sampler's random stream is the sequence's own). Not thread-safe.
 * Under a {@link TokenConstraint} the sampler's own pick stands when the constraint allows it, so a grammar that
 * agrees with the model changes nothing; only otherwise are the logits masked and the token chosen again.
 */
final class TokenPicker {
    private final Sampler sampler;
    private final boolean argmaxOnDevice;
    private final TokenLogprobs.Calculator logprobs; // null: not asked
    private float[] logits;
    private float[] masked; // the logits under a constraint's mask, when its first pick was not allowed
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
        return pick(buffers, index, history, generatedFrom, vocab, null);
    }

    /** As {@link #pick(ForwardBuffers, int, SlotTokens, int, int)}, choosing only what {@code constraint} allows. */
    int pick(ForwardBuffers buffers, int index, SlotTokens history, int generatedFrom, int vocab,
             TokenConstraint constraint) {
        if (argmaxOnDevice && constraint == null) return buffers.argmax(index);
        if (logits == null) logits = new float[vocab];
        buffers.readLogits(index, logits);
        int token = sampler.sample(logits, history.array(), history.length(), generatedFrom);
        if (constraint != null && !constraint.allows(token)) {
            if (masked == null) masked = new float[vocab];
            System.arraycopy(logits, 0, masked, 0, vocab);
            constraint.mask(masked);
            token = sampler.sample(masked, history.array(), history.length(), generatedFrom);
        }
        if (constraint != null) constraint.accept(token);
        // The raw logits: the sampler never modifies them.
        if (logprobs != null) lastLogprobs = logprobs.of(logits, token);
        return token;
    }

    /** The logprobs of the token {@link #pick} chose last; null when none were asked for. */
    TokenLogprobs lastLogprobs() {
        return lastLogprobs;
    }
}
