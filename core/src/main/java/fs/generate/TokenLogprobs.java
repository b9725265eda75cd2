package fs.generate;

import fs.FsException;

/**
 * The log-probability of a chosen token and of the most likely alternatives at its position, under the model's raw
 * distribution: the log-softmax of the logits before any penalty, temperature or filter (what OpenAI and vLLM report
 * by default), so the numbers do not depend on how the token was sampled.
 *
 * @param token        the chosen token
 * @param logprob      its natural log-probability (≤ 0)
 * @param topTokens    the most likely tokens, most likely first (the lower id first on ties); as many as asked
 * @param topLogprobs  their log-probabilities, in the same order
 */
public record TokenLogprobs(int token, float logprob, int[] topTokens, float[] topLogprobs) {
    /** The most alternatives a request may ask for (OpenAI's limit for top_logprobs). */
    public static final int MAX_TOP = 20;

    /** Throws an FsException unless {@code top} is -1 (no logprobs) or a count in 0..{@link #MAX_TOP}. */
    public static void checkTop(int top) {
        if (top < -1 || top > MAX_TOP) {
            throw new FsException("the number of top logprobs must be in 0.." + MAX_TOP + " (or -1: none), got " + top);
        }
    }

    /** Computes one position's log-probabilities. One per sequence (its scratch is reused); not thread-safe. */
    static final class Calculator {
        private final int top;
        private final long[] heap;
        private final int[] topTokens;

        /** Reports {@code top} alternatives (0..{@link #MAX_TOP}) beside the chosen token. */
        Calculator(int top) {
            if (top < 0 || top > MAX_TOP) throw new IllegalArgumentException("top " + top);
            this.top = top;
            this.heap = new long[top];
            this.topTokens = new int[top];
        }

        /** The log-probabilities of {@code token} and the top alternatives under the log-softmax of {@code logits}. */
        TokenLogprobs of(float[] logits, int token) {
            // log p(j) = logit[j] - (max + log Σ exp(logit[i] - max)), in double: no term overflows, the largest is 1.
            float max = logits[Sampler.argmax(logits)];
            double sum = 0;
            for (float logit : logits) sum += Math.exp((double) logit - max);
            double logNormalizer = max + Math.log(sum);
            int n = Math.min(top, logits.length);
            if (n > 0) Sampler.selectTopK(logits, n, heap, topTokens);
            int[] tokens = new int[n];
            float[] logprobs = new float[n];
            for (int i = 0; i < n; i++) {
                tokens[i] = topTokens[i];
                logprobs[i] = (float) (logits[tokens[i]] - logNormalizer);
            }
            return new TokenLogprobs(token, (float) (logits[token] - logNormalizer), tokens, logprobs);
        }
    }
}
