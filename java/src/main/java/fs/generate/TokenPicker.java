package fs.generate;

import fs.model.ForwardBuffers;

/**
 * Chooses a sequence's next token from its row of logits: on the device when greedy without a penalty (no logits
 * cross to the host), else on the host with the sequence's {@link Sampler}, whose penalty sees the tokens so far.
 * One per sequence (its sampler's random stream is the sequence's own). Not thread-safe.
 */
final class TokenPicker {
    private final Sampler sampler;
    private final boolean argmaxOnDevice;
    private float[] logits;

    TokenPicker(SamplingParams params) {
        this.sampler = new Sampler(params);
        this.argmaxOnDevice = params.isGreedy() && params.repeatPenalty() == 1f;
    }

    /** The next token from logits row {@code index} of the last forward into {@code buffers}. */
    int pick(ForwardBuffers buffers, int index, SlotTokens history, int vocab) {
        if (argmaxOnDevice) return buffers.argmax(index);
        if (logits == null) logits = new float[vocab];
        buffers.readLogits(index, logits);
        return sampler.sample(logits, history.array(), history.length());
    }
}
