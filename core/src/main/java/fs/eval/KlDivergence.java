package fs.eval;

import java.util.Arrays;

/**
 * How far a model's next-token distributions are from a base model's on the same tokens, with the figures and names
 * of llama-perplexity's {@code --kl-divergence}: KL(base ‖ model) per token (mean ± σ and its distribution), Δp =
 * p(correct token) − p_base(correct token), "same top p" (how often both put the same token first) and both models'
 * perplexities with their ratio. One thread at a time.
 *
 * <p>One deliberate difference: llama-perplexity first stores the base's log-probabilities in a file, rounded to 16
 * bits over the top 16 nats, and drops the tokens below that range from the sum. Here both models run side by side,
 * so the base's distribution is used exactly; the means agree with llama.cpp's to far below their uncertainties,
 * and the small per-token values (the low KLD percentiles) are no longer rounding noise.
 */
public final class KlDivergence {

    /**
     * One scored token compared.
     *
     * @param nll     −log p(target) under the model
     * @param baseNll −log p_base(target)
     * @param kld     Σ p_base · log(p_base / p) over the vocabulary
     * @param deltaP  p(target) − p_base(target)
     * @param sameTop whether both rows have their largest logit at the same token
     */
    public record Token(double nll, double baseNll, double kld, double deltaP, boolean sameTop) {}

    /**
     * A sorted sample of per-token values, read as llama-perplexity reads it: the percentile p interpolates linearly
     * between the values at ranks ⌊p(n−1)⌋ and the next; the median is the middle value or the mean of the two.
     */
    public record Distribution(float[] sorted) {
        public Distribution {
            if (sorted.length == 0) throw new IllegalArgumentException("an empty distribution");
        }

        public double min() {
            return sorted[0];
        }

        public double max() {
            return sorted[sorted.length - 1];
        }

        public double median() {
            int n = sorted.length;
            return n % 2 == 0 ? 0.5 * (sorted[n / 2] + sorted[n / 2 - 1]) : sorted[n / 2];
        }

        /** The value below which {@code fraction} (0..1) of the sample lies. */
        public double percentile(double fraction) {
            if (fraction <= 0) return min();
            if (fraction >= 1) return max();
            double rank = fraction * (sorted.length - 1);
            int below = (int) rank;
            double weight = rank - below;
            return (1 - weight) * sorted[below] + weight * sorted[Math.min(below + 1, sorted.length - 1)];
        }
    }

    /**
     * Every figure llama-perplexity prints at the end of a KL-divergence run.
     *
     * @param count             tokens compared
     * @param ppl               PPL(Q), the model's perplexity
     * @param basePpl           PPL(base)
     * @param lnPplCorrelation  Cor(ln(PPL(Q)), ln(PPL(base))) as a fraction (NaN when either has no uncertainty)
     * @param lnPplRatio        mean ln(PPL(Q)/PPL(base))
     * @param pplRatio          PPL(Q)/PPL(base)
     * @param pplDifference     PPL(Q) − PPL(base)
     * @param kld               mean KLD
     * @param kldDistribution   the per-token KLD values
     * @param deltaP            mean Δp
     * @param deltaPDistribution the per-token Δp values
     * @param deltaPRms         RMS Δp
     * @param sameTop           "same top p", the fraction of tokens whose top token agrees
     */
    public record Summary(
            long count, Estimate ppl, Estimate basePpl, double lnPplCorrelation, Estimate lnPplRatio,
            Estimate pplRatio, Estimate pplDifference, Estimate kld, Distribution kldDistribution, Estimate deltaP,
            Distribution deltaPDistribution, Estimate deltaPRms, Estimate sameTop) {}

    private double sumNll;
    private double sumNll2;
    private double sumBaseNll;
    private double sumBaseNll2;
    private double sumNllBaseNll;
    private double sumKld;
    private double sumKld2;
    private double sumDeltaP;
    private double sumDeltaP2;
    private double sumDeltaP4;
    private long sameTop;
    private int count;
    private float[] kldValues = new float[1024];
    private float[] deltaPValues = new float[1024];

    /**
     * Compares the two rows of logits at one position, for the next token {@code target}. Pure: float64 over the
     * float32 logits, in one pass (two exponentials per entry), using Σ p_base·(log p_base − log p) =
     * Σ p_base·(base − logits) + logsumexp(logits) − logsumexp(base).
     */
    public static Token compare(float[] base, float[] logits, int target) {
        if (base.length != logits.length) {
            throw new IllegalArgumentException("rows of " + base.length + " and " + logits.length + " logits");
        }
        double baseMax = LogSoftmax.max(base);
        double max = LogSoftmax.max(logits);
        double baseSum = 0;
        double sum = 0;
        double weightedDifference = 0;
        for (int i = 0; i < base.length; i++) {
            double e = Math.exp(base[i] - baseMax);
            baseSum += e;
            sum += Math.exp(logits[i] - max);
            weightedDifference += e * ((double) base[i] - logits[i]);
        }
        double baseLogSumExp = baseMax + Math.log(baseSum);
        double logSumExp = max + Math.log(sum);
        // KL is never negative; a rounding below 0 (identical rows leave ~1e-16) would only confuse the minimum.
        double kld = Math.max(0, weightedDifference / baseSum + logSumExp - baseLogSumExp);
        double nll = logSumExp - logits[target];
        double baseNll = baseLogSumExp - base[target];
        return new Token(nll, baseNll, kld, Math.exp(-nll) - Math.exp(-baseNll),
                LogSoftmax.argmax(base) == LogSoftmax.argmax(logits));
    }

    /** Compares one position and adds it; returns the comparison. */
    public Token add(float[] base, float[] logits, int target) {
        Token token = compare(base, logits, target);
        add(token);
        return token;
    }

    public void add(Token token) {
        sumNll += token.nll();
        sumNll2 += token.nll() * token.nll();
        sumBaseNll += token.baseNll();
        sumBaseNll2 += token.baseNll() * token.baseNll();
        sumNllBaseNll += token.nll() * token.baseNll();
        sumKld += token.kld();
        sumKld2 += token.kld() * token.kld();
        double dp2 = token.deltaP() * token.deltaP();
        sumDeltaP += token.deltaP();
        sumDeltaP2 += dp2;
        sumDeltaP4 += dp2 * dp2;
        if (token.sameTop()) sameTop++;
        if (count == kldValues.length) {
            kldValues = Arrays.copyOf(kldValues, 2 * count);
            deltaPValues = Arrays.copyOf(deltaPValues, 2 * count);
        }
        kldValues[count] = (float) token.kld();
        deltaPValues[count] = (float) token.deltaP();
        count++;
    }

    public long count() {
        return count;
    }

    /** The running mean KLD (what the progress line shows). */
    public double meanKld() {
        return count == 0 ? 0 : sumKld / count;
    }

    /** The running fraction of tokens whose top token agrees. */
    public double sameTopFraction() {
        return count == 0 ? 0 : (double) sameTop / count;
    }

    /** Every figure of the tokens added so far, as llama-perplexity derives them from the same sums. */
    public Summary summary() {
        if (count == 0) throw new IllegalStateException("no token was compared");
        Estimate lnPpl = Estimate.mean(sumNll, sumNll2, count);
        Estimate lnBasePpl = Estimate.mean(sumBaseNll, sumBaseNll2, count);
        Estimate ppl = lnPpl.exp();
        Estimate basePpl = lnBasePpl.exp();
        double covariance = Estimate.covarianceOfMeans(sumNll, sumBaseNll, sumNllBaseNll, count);
        double correlation = covariance / (lnPpl.uncertainty() * lnBasePpl.uncertainty());
        Estimate lnRatio = new Estimate(lnPpl.value() - lnBasePpl.value(), rootOf(
                square(lnPpl.uncertainty()) + square(lnBasePpl.uncertainty()) - 2 * covariance));
        Estimate difference = new Estimate(ppl.value() - basePpl.value(), rootOf(square(ppl.uncertainty())
                + square(basePpl.uncertainty()) - 2 * ppl.value() * basePpl.value() * covariance));

        Estimate meanSquareDeltaP = Estimate.mean(sumDeltaP2, sumDeltaP4, count);
        double rms = Math.sqrt(meanSquareDeltaP.value());
        Estimate deltaPRms = new Estimate(rms, rms > 0 ? 0.5 / rms * meanSquareDeltaP.uncertainty() : 0);
        double same = (double) sameTop / count;
        Estimate sameTopEstimate = new Estimate(same, count > 1 ? Math.sqrt(same * (1 - same) / (count - 1)) : 0);
        return new Summary(count, ppl, basePpl, correlation, lnRatio, lnRatio.exp(), difference,
                Estimate.mean(sumKld, sumKld2, count), sorted(kldValues), Estimate.mean(sumDeltaP, sumDeltaP2, count),
                sorted(deltaPValues), deltaPRms, sameTopEstimate);
    }

    private Distribution sorted(float[] values) {
        float[] copy = Arrays.copyOf(values, count);
        Arrays.sort(copy);
        return new Distribution(copy);
    }

    private static double square(double x) {
        return x * x;
    }

    /**
     * The square root of a variance of a difference, which for a model compared with itself is 0 up to rounding:
     * a rounding below 0 is 0, not NaN.
     */
    private static double rootOf(double variance) {
        return Math.sqrt(Math.max(0, variance));
    }
}
