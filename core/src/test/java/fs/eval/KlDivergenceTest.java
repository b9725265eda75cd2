package fs.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KlDivergenceTest {

    @Test
    void aHandComputedPair() {
        float[] base = {0, 0}; // p_base = (1/2, 1/2)
        float[] logits = {(float) Math.log(3), 0}; // p = (3/4, 1/4)
        KlDivergence.Token token = KlDivergence.compare(base, logits, 1);
        // KL = 1/2 ln((1/2)/(3/4)) + 1/2 ln((1/2)/(1/4)) = 1/2 ln(4/3)
        assertEquals(0.5 * Math.log(4.0 / 3), token.kld(), 1e-7);
        assertEquals(Math.log(4), token.nll(), 1e-7);
        assertEquals(Math.log(2), token.baseNll(), 1e-7);
        assertEquals(0.25 - 0.5, token.deltaP(), 1e-7);
        assertTrue(token.sameTop(), "the base's tie goes to token 0, the model's top is token 0");
        assertFalse(KlDivergence.compare(base, new float[] {0, 1}, 1).sameTop());
    }

    @Test
    void aRowComparedWithItselfIsZeroAndAgrees() {
        float[] row = {1.5f, -2, 0.25f, 3, 3};
        KlDivergence.Token token = KlDivergence.compare(row, row.clone(), 2);
        assertEquals(0, token.kld());
        assertEquals(0, token.deltaP());
        assertEquals(token.nll(), token.baseNll());
        assertTrue(token.sameTop());
    }

    @Test
    void shiftingEveryLogitChangesNothing() {
        float[] base = {0.5f, -1, 2};
        float[] shifted = {100.5f, 99, 102};
        KlDivergence.Token token = KlDivergence.compare(base, shifted, 0);
        assertEquals(0, token.kld(), 1e-12);
        assertEquals(0, token.deltaP(), 1e-12);
    }

    @Test
    void rowsOfDifferentLengthsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> KlDivergence.compare(new float[3], new float[4], 0));
    }

    @Test
    void eachTokenAgreesWithAStraightforwardFloat64Computation() {
        Random random = new Random(11);
        int vocab = 64;
        for (int t = 0; t < 200; t++) {
            float[] base = randomRow(random, vocab);
            float[] logits = perturbed(random, base, 0.3);
            int target = random.nextInt(vocab);
            double[] p = probabilities(base);
            double[] q = probabilities(logits);
            double kld = 0;
            for (int i = 0; i < vocab; i++) kld += p[i] * Math.log(p[i] / q[i]);
            KlDivergence.Token token = KlDivergence.compare(base, logits, target);
            assertEquals(kld, token.kld(), 1e-12);
            assertEquals(-Math.log(q[target]), token.nll(), 1e-12);
            assertEquals(-Math.log(p[target]), token.baseNll(), 1e-12);
            assertEquals(q[target] - p[target], token.deltaP(), 1e-14);
            assertEquals(argmax(p) == argmax(q), token.sameTop());
        }
    }

    @Test
    void theSummaryAgreesWithTwoPassStatistics() {
        Random random = new Random(5);
        int vocab = 40;
        int n = 300;
        KlDivergence kl = new KlDivergence();
        double[] nll = new double[n];
        double[] baseNll = new double[n];
        double[] kld = new double[n];
        double[] dp = new double[n];
        int same = 0;
        for (int t = 0; t < n; t++) {
            float[] base = randomRow(random, vocab);
            KlDivergence.Token token = kl.add(base, perturbed(random, base, 0.5), random.nextInt(vocab));
            nll[t] = token.nll();
            baseNll[t] = token.baseNll();
            kld[t] = token.kld();
            dp[t] = token.deltaP();
            if (token.sameTop()) same++;
        }
        KlDivergence.Summary s = kl.summary();
        assertEquals(n, s.count());
        assertEquals(mean(kld), s.kld().value(), 1e-12);
        assertEquals(standardErrorOfMean(kld), s.kld().uncertainty(), 1e-9 * s.kld().uncertainty());
        assertEquals(Math.exp(mean(nll)), s.ppl().value(), 1e-9);
        assertEquals(Math.exp(mean(nll)) * standardErrorOfMean(nll), s.ppl().uncertainty(), 1e-9);
        assertEquals(Math.exp(mean(baseNll)), s.basePpl().value(), 1e-9);
        assertEquals(mean(nll) - mean(baseNll), s.lnPplRatio().value(), 1e-12);
        assertEquals(Math.exp(mean(nll) - mean(baseNll)), s.pplRatio().value(), 1e-12);
        assertEquals(s.ppl().value() - s.basePpl().value(), s.pplDifference().value(), 1e-12);
        double[] differences = new double[n];
        for (int t = 0; t < n; t++) differences[t] = nll[t] - baseNll[t];
        assertEquals(standardErrorOfMean(differences), s.lnPplRatio().uncertainty(), 1e-9,
                "the ratio's uncertainty is that of the mean per-token difference");
        assertEquals(pearson(nll, baseNll), s.lnPplCorrelation(), 1e-9);
        assertEquals(mean(dp), s.deltaP().value(), 1e-14);
        double meanSquare = 0;
        for (double d : dp) meanSquare += d * d / n;
        assertEquals(Math.sqrt(meanSquare), s.deltaPRms().value(), 1e-12);
        assertEquals((double) same / n, s.sameTop().value(), 1e-15);
        assertEquals(Math.sqrt(s.sameTop().value() * (1 - s.sameTop().value()) / (n - 1)), s.sameTop().uncertainty(),
                1e-15);
        double[] sorted = kld.clone();
        Arrays.sort(sorted);
        assertEquals(sorted[0], s.kldDistribution().min(), 1e-7 * sorted[0] + 1e-12);
        assertEquals(sorted[n - 1], s.kldDistribution().max(), 1e-7 * sorted[n - 1]);
        assertEquals(0.5 * (sorted[n / 2 - 1] + sorted[n / 2]), s.kldDistribution().median(), 1e-7 * sorted[n / 2]);
    }

    @Test
    void aModelComparedWithItselfHasRatioOneAndFullCorrelation() {
        Random random = new Random(3);
        KlDivergence kl = new KlDivergence();
        for (int t = 0; t < 50; t++) {
            float[] row = randomRow(random, 30);
            kl.add(row, row, random.nextInt(30));
        }
        KlDivergence.Summary s = kl.summary();
        assertEquals(0, s.kld().value());
        assertEquals(1, s.pplRatio().value(), 1e-15);
        assertEquals(0, s.lnPplRatio().uncertainty(), 1e-9, "no NaN from a variance that rounds below 0");
        assertEquals(1, s.lnPplCorrelation(), 1e-9);
        assertEquals(1, s.sameTop().value());
        assertEquals(0, s.deltaPRms().value());
    }

    @Test
    void distributionsReadPercentilesAsLlamaPerplexityDoes() {
        KlDivergence.Distribution d = new KlDivergence.Distribution(new float[] {1, 2, 3, 4});
        assertEquals(1, d.min());
        assertEquals(4, d.max());
        assertEquals(2.5, d.median(), 1e-15);
        assertEquals(3.7, d.percentile(0.9), 1e-6, "rank 0.9·3 = 2.7: 3 + 0.7·(4 − 3)");
        assertEquals(1.3, d.percentile(0.1), 1e-6);
        assertEquals(1, d.percentile(0));
        assertEquals(4, d.percentile(1));
        assertEquals(2, new KlDivergence.Distribution(new float[] {1, 2, 7}).median());
    }

    @Test
    void fewerThanElevenValuesHaveNoUncertaintyAsInLlamaPerplexity() {
        assertEquals(new Estimate(2, 0), Estimate.mean(20, 50, 10));
        Estimate eleven = Estimate.mean(22, 55, 11); // E[x] 2, E[x²] 5: variance 1, over 10
        assertEquals(2, eleven.value(), 1e-15);
        assertEquals(Math.sqrt(0.1), eleven.uncertainty(), 1e-15);
        assertEquals(0, Estimate.covarianceOfMeans(1, 2, 3, 9));
    }

    private static float[] randomRow(Random random, int vocab) {
        float[] row = new float[vocab];
        for (int i = 0; i < vocab; i++) row[i] = (float) (2 * random.nextGaussian());
        return row;
    }

    private static float[] perturbed(Random random, float[] row, double sigma) {
        float[] out = new float[row.length];
        for (int i = 0; i < row.length; i++) out[i] = (float) (row[i] + sigma * random.nextGaussian());
        return out;
    }

    /** softmax straight from its definition (the test rows are small enough not to overflow). */
    private static double[] probabilities(float[] logits) {
        double denominator = 0;
        for (float logit : logits) denominator += Math.exp(logit);
        double[] p = new double[logits.length];
        for (int i = 0; i < p.length; i++) p[i] = Math.exp(logits[i]) / denominator;
        return p;
    }

    private static int argmax(double[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
        return best;
    }

    private static double mean(double[] values) {
        double sum = 0;
        for (double v : values) sum += v;
        return sum / values.length;
    }

    private static double standardErrorOfMean(double[] values) {
        double mean = mean(values);
        double squares = 0;
        for (double v : values) squares += (v - mean) * (v - mean);
        return Math.sqrt(squares / (values.length - 1) / values.length);
    }

    private static double pearson(double[] a, double[] b) {
        double ma = mean(a);
        double mb = mean(b);
        double ab = 0;
        double aa = 0;
        double bb = 0;
        for (int i = 0; i < a.length; i++) {
            ab += (a[i] - ma) * (b[i] - mb);
            aa += (a[i] - ma) * (a[i] - ma);
            bb += (b[i] - mb) * (b[i] - mb);
        }
        return ab / Math.sqrt(aa * bb);
    }
}
