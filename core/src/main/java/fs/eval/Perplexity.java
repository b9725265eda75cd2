package fs.eval;

/**
 * Perplexity as llama-perplexity's {@code perplexity()} accumulates it: the negative log-likelihood of each scored
 * token, summed with its square, then PPL = exp(mean NLL) ± PPL · sqrt((E[nll²] − E[nll]²) / (n − 1)). One thread
 * at a time.
 */
public final class Perplexity {
    private double sum;
    private double sumOfSquares;
    private long count;

    /** Scores one token: {@code target} after the position whose logits are {@code logits}; returns its NLL. */
    public double add(float[] logits, int target) {
        double nll = LogSoftmax.negativeLogLikelihood(logits, target);
        add(nll);
        return nll;
    }

    /** Adds one token's negative log-likelihood. */
    public void add(double nll) {
        sum += nll;
        sumOfSquares += nll * nll;
        count++;
    }

    /** Tokens scored so far. */
    public long count() {
        return count;
    }

    /**
     * The perplexity and its uncertainty; the uncertainty is 0 when there is no spread to measure (fewer than two
     * tokens, or a variance that rounds to ≤ 0, where llama-perplexity prints an error instead of a figure).
     */
    public Estimate estimate() {
        if (count == 0) throw new IllegalStateException("no token was scored");
        double mean = sum / count;
        double ppl = Math.exp(mean);
        double variance = sumOfSquares / count - mean * mean;
        double uncertainty = variance > 0 && count > 1 ? ppl * Math.sqrt(variance / (count - 1)) : 0;
        return new Estimate(ppl, uncertainty);
    }
}
