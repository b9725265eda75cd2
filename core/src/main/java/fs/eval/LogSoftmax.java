package fs.eval;

/**
 * The log-softmax quantities of one row of logits, in float64 over the row's float32 values: the log of the
 * normalizer and the top entry. Pure functions; the row is only read.
 */
public final class LogSoftmax {
    private LogSoftmax() {}

    /** log Σ exp(logits[i]), computed as max + log Σ exp(logits[i] − max) so that nothing overflows. */
    public static double logSumExp(float[] logits) {
        double max = max(logits);
        double sum = 0;
        for (float logit : logits) sum += Math.exp(logit - max);
        return max + Math.log(sum);
    }

    /** −log softmax(logits)[target]: the negative log-likelihood of the token {@code target}. */
    public static double negativeLogLikelihood(float[] logits, int target) {
        return logSumExp(logits) - logits[target];
    }

    /** The index of the largest logit, the lowest one on ties (as llama-perplexity's top-token comparison). */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) best = i;
        }
        return best;
    }

    static double max(float[] logits) {
        float max = logits[0];
        for (float logit : logits) max = Math.max(max, logit);
        return max;
    }
}
