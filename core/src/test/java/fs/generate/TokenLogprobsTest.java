package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TokenLogprobsTest {

    /** log-softmax written out directly, in double: log(exp(x_j - m) / Σ exp(x_i - m)). */
    private static double[] referenceLogSoftmax(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float logit : logits) max = Math.max(max, logit);
        double[] shifted = new double[logits.length];
        double sum = 0;
        for (int i = 0; i < logits.length; i++) {
            shifted[i] = Math.exp(logits[i] - max);
            sum += shifted[i];
        }
        double[] out = new double[logits.length];
        for (int i = 0; i < logits.length; i++) out[i] = Math.log(shifted[i] / sum);
        return out;
    }

    private static float[] randomLogits(Random random, int vocab, float offset) {
        float[] logits = new float[vocab];
        for (int i = 0; i < vocab; i++) logits[i] = offset + (float) (random.nextGaussian() * 4);
        return logits;
    }

    @Test
    void theChosenTokenAndTheTopListAreTheLogSoftmaxOfTheLogits() {
        Random random = new Random(11);
        for (int top : new int[] {0, 1, 5, 20}) {
            TokenLogprobs.Calculator calculator = new TokenLogprobs.Calculator(top);
            for (int trial = 0; trial < 20; trial++) {
                // Offsets far from 0: exp of a raw logit of 600 overflows even a double; max-subtraction does not.
                float offset = new float[] {0f, 600f, -600f}[trial % 3];
                float[] logits = randomLogits(random, 5000, offset);
                double[] expected = referenceLogSoftmax(logits);
                int chosen = random.nextInt(logits.length);
                TokenLogprobs result = calculator.of(logits, chosen);

                assertEquals(chosen, result.token());
                assertEquals(expected[chosen], result.logprob(), 1e-4, "trial " + trial);
                assertEquals(top, result.topTokens().length);
                assertEquals(top, result.topLogprobs().length);
                Integer[] ranking = IntStream.range(0, logits.length).boxed().toArray(Integer[]::new);
                Arrays.sort(ranking, Comparator.<Integer>comparingDouble(i -> -logits[i]).thenComparing(i -> i));
                double mass = 0;
                for (int i = 0; i < top; i++) {
                    assertEquals(ranking[i], result.topTokens()[i], "rank " + i);
                    assertEquals(expected[ranking[i]], result.topLogprobs()[i], 1e-4, "rank " + i);
                    if (i > 0) assertTrue(result.topLogprobs()[i] <= result.topLogprobs()[i - 1]);
                    if (result.topTokens()[i] == chosen) assertEquals(result.logprob(), result.topLogprobs()[i]);
                    mass += Math.exp(result.topLogprobs()[i]);
                }
                assertTrue(mass <= 1 + 1e-6, "the top tokens hold at most all the mass: " + mass);
                assertTrue(Float.isFinite(result.logprob()) && result.logprob() <= 0);
            }
        }
    }

    @Test
    void aTopListAsLongAsTheVocabularyHoldsAllTheMassAndTiesGoToTheLowerId() {
        float[] logits = {1f, 3f, 3f, -2f, 0.5f};
        TokenLogprobs result = new TokenLogprobs.Calculator(5).of(logits, 3);
        assertEquals(Arrays.toString(new int[] {1, 2, 0, 4, 3}), Arrays.toString(result.topTokens()));
        double mass = 0;
        for (float logprob : result.topLogprobs()) mass += Math.exp(logprob);
        assertEquals(1, mass, 1e-6);
        // p(3) = e^-2 / (e^1 + 2e^3 + e^-2 + e^0.5), by hand.
        double p3 = Math.exp(-2) / (Math.exp(1) + 2 * Math.exp(3) + Math.exp(-2) + Math.exp(0.5));
        assertEquals(Math.log(p3), result.logprob(), 1e-6);
        assertEquals(result.logprob(), result.topLogprobs()[4]);
        // More asked for than the vocabulary holds: the whole vocabulary.
        assertEquals(2, new TokenLogprobs.Calculator(20).of(new float[] {0f, 0f}, 0).topTokens().length);
    }

    @Test
    void theCountOfAlternativesIsChecked() {
        TokenLogprobs.checkTop(-1);
        TokenLogprobs.checkTop(20);
        FsException e = assertThrows(FsException.class, () -> TokenLogprobs.checkTop(21));
        assertTrue(e.getMessage().contains("0..20") && e.getMessage().contains("21"), e.getMessage());
        assertThrows(FsException.class, () -> TokenLogprobs.checkTop(-2));
    }
}
