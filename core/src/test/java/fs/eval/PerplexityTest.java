package fs.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

class PerplexityTest {

    @Test
    void aUniformDistributionHasThePerplexityOfItsSize() {
        Perplexity perplexity = new Perplexity();
        for (int i = 0; i < 5; i++) perplexity.add(new float[] {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}, i);
        assertEquals(5, perplexity.count());
        assertEquals(7, perplexity.estimate().value(), 1e-12);
        assertEquals(0, perplexity.estimate().uncertainty(), 1e-12, "every NLL is the same");
    }

    @Test
    void twoTokensGiveTheGeometricMeanAndHalfTheirSpread() {
        Perplexity perplexity = new Perplexity();
        perplexity.add(1.0);
        perplexity.add(3.0);
        // exp(mean 2); variance E[x²] − E[x]² = 5 − 4 = 1, over n − 1 = 1: σ = 1, times the PPL.
        assertEquals(Math.exp(2), perplexity.estimate().value(), 1e-12);
        assertEquals(Math.exp(2), perplexity.estimate().uncertainty(), 1e-12);
    }

    @Test
    void agreesWithAStraightforwardFloat64Computation() {
        Random random = new Random(7);
        int vocab = 50;
        int n = 400;
        Perplexity perplexity = new Perplexity();
        double[] nll = new double[n];
        for (int t = 0; t < n; t++) {
            float[] logits = new float[vocab];
            for (int i = 0; i < vocab; i++) logits[i] = (float) (3 * random.nextGaussian());
            int target = random.nextInt(vocab);
            double denominator = 0;
            for (float logit : logits) denominator += Math.exp(logit);
            nll[t] = -Math.log(Math.exp(logits[target]) / denominator);
            assertEquals(nll[t], perplexity.add(logits, target), 1e-12);
        }
        double mean = 0;
        for (double x : nll) mean += x / n;
        double squares = 0;
        for (double x : nll) squares += (x - mean) * (x - mean);
        double standardErrorOfMean = Math.sqrt(squares / (n - 1) / n);
        Estimate estimate = perplexity.estimate();
        assertEquals(Math.exp(mean), estimate.value(), 1e-10 * Math.exp(mean));
        assertEquals(Math.exp(mean) * standardErrorOfMean, estimate.uncertainty(), 1e-9 * estimate.uncertainty());
    }

    @Test
    void nothingScoredHasNoEstimate() {
        assertThrows(IllegalStateException.class, () -> new Perplexity().estimate());
    }
}
