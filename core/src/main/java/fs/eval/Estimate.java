package fs.eval;

/**
 * A figure and its one-sigma uncertainty, printed by llama-perplexity as {@code value ± uncertainty}.
 *
 * @param value       the estimate
 * @param uncertainty its standard error (0 where llama-perplexity gives none: too few values)
 */
public record Estimate(double value, double uncertainty) {

    /**
     * The mean of values given their sum and sum of squares, with the standard error of that mean, as
     * llama-perplexity's {@code mean_and_uncertainty} computes it: sqrt((E[x²] − E[x]²) / (n − 1)), and 0 for the
     * uncertainty when there are 10 values or fewer or the variance comes out as rounding noise (≤ 0).
     */
    static Estimate mean(double sum, double sumOfSquares, long count) {
        if (count < 1) return new Estimate(0, 0);
        double mean = sum / count;
        double variance = sumOfSquares / count - mean * mean;
        return new Estimate(mean, variance > 0 && count > 10 ? Math.sqrt(variance / (count - 1)) : 0);
    }

    /**
     * The covariance of two means (of a and of b over the same n values), as llama-perplexity's {@code covariance}
     * computes it: (E[ab] − E[a]E[b]) / (n − 1), and 0 below 10 values.
     */
    static double covarianceOfMeans(double sumA, double sumB, double sumAB, long count) {
        if (count < 10) return 0;
        return (sumAB / count - (sumA / count) * (sumB / count)) / (count - 1);
    }

    /** e^x of an estimate of x, with the uncertainty carried through the derivative (e^x · σ). */
    Estimate exp() {
        double e = Math.exp(value);
        return new Estimate(e, e * uncertainty);
    }
}
