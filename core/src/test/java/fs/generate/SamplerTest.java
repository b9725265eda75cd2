package fs.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SamplerTest {
    /** Logits whose plain softmax is exactly these probabilities (they sum to 1), most likely first. */
    private static final double[] P = {0.40, 0.25, 0.15, 0.10, 0.05, 0.03, 0.02};

    private static final int DRAWS = 200_000;

    private static float[] logitsOf(double[] probabilities) {
        float[] logits = new float[probabilities.length];
        for (int i = 0; i < logits.length; i++) logits[i] = (float) Math.log(probabilities[i]);
        return logits;
    }

    private static SamplingParams sampling(float temperature, int topK, float topP, float minP, float penalty) {
        return new SamplingParams(temperature, topK, topP, minP, penalty, 12345L);
    }

    /** Expected probabilities: {@code weights} (unnormalised, 0 = excluded) divided by their sum. */
    private static double[] normalised(double... weights) {
        double sum = Arrays.stream(weights).sum();
        return Arrays.stream(weights).map(w -> w / sum).toArray();
    }

    /**
     * Draws {@link #DRAWS} tokens and checks each frequency against its expected probability within 5 binomial
     * standard deviations; a token with probability 0 must never be drawn.
     */
    private static void assertDistribution(double[] expected, Sampler sampler, float[] logits, int[] history) {
        float[] original = logits.clone();
        long[] counts = new long[logits.length];
        for (int i = 0; i < DRAWS; i++) counts[sampler.sample(logits, history, history.length, 0)]++;
        assertArrayEquals(original, logits, "the caller's logits must not change");
        for (int t = 0; t < logits.length; t++) {
            double p = expected[t];
            if (p == 0) {
                assertEquals(0, counts[t], "token " + t + " is excluded but was drawn " + counts[t] + " times");
                continue;
            }
            double mean = DRAWS * p;
            double sigma = Math.sqrt(DRAWS * p * (1 - p));
            assertTrue(Math.abs(counts[t] - mean) <= 5 * sigma + 1,
                    "token " + t + ": drawn " + counts[t] + " times, expected " + mean + " ± " + 5 * sigma);
        }
    }

    private static void assertDistribution(double[] expected, SamplingParams params, float[] logits) {
        assertDistribution(expected, new Sampler(params), logits, new int[0]);
    }

    @Test
    void plainSamplingFollowsTheSoftmax() {
        assertDistribution(P, sampling(1f, 0, 1f, 0f, 1f), logitsOf(P));
    }

    @Test
    void temperatureSharpensAndFlattens() {
        // softmax(logit / T) is proportional to p^(1/T).
        double[] half = Arrays.stream(P).map(p -> p * p).toArray();
        assertDistribution(normalised(half), sampling(0.5f, 0, 1f, 0f, 1f), logitsOf(P));
        double[] twice = Arrays.stream(P).map(Math::sqrt).toArray();
        assertDistribution(normalised(twice), sampling(2f, 0, 1f, 0f, 1f), logitsOf(P));
    }

    @Test
    void topKKeepsTheKMostLikely() {
        assertDistribution(normalised(0.40, 0.25, 0.15, 0, 0, 0, 0), sampling(1f, 3, 1f, 0f, 1f), logitsOf(P));
    }

    @Test
    void topKFindsTheLargestWhereverTheyAre() {
        double[] shuffled = {0.03, 0.25, 0.02, 0.40, 0.05, 0.15, 0.10};
        assertDistribution(normalised(0, 0.25, 0, 0.40, 0, 0.15, 0.10), sampling(1f, 4, 1f, 0f, 1f),
                logitsOf(shuffled));
    }

    @Test
    void topPKeepsTheSmallestSetReachingP() {
        // 0.40 + 0.25 = 0.65 < 0.7, + 0.15 = 0.80 ≥ 0.7: three tokens.
        assertDistribution(normalised(0.40, 0.25, 0.15, 0, 0, 0, 0), sampling(1f, 0, 0.7f, 0f, 1f), logitsOf(P));
        // 0.40 < 0.41 but 0.65 ≥ 0.41: two tokens.
        assertDistribution(normalised(0.40, 0.25, 0, 0, 0, 0, 0), sampling(1f, 0, 0.41f, 0f, 1f), logitsOf(P));
        // Below the top probability: only the top token.
        assertDistribution(normalised(1, 0, 0, 0, 0, 0, 0), sampling(1f, 0, 0.1f, 0f, 1f), logitsOf(P));
    }

    @Test
    void topPSeesTheTemperedDistribution() {
        // At T = 0.5: p² / Σp² = 0.619, 0.242, 0.087, ...: 0.619 < 0.8 ≤ 0.861, so two tokens survive.
        assertDistribution(normalised(0.16, 0.0625, 0, 0, 0, 0, 0), sampling(0.5f, 0, 0.8f, 0f, 1f), logitsOf(P));
    }

    @Test
    void topPAppliesAfterTopK() {
        // Top-3 renormalised: 0.5, 0.3125, 0.1875; 0.5 < 0.6 ≤ 0.8125: two tokens.
        assertDistribution(normalised(0.40, 0.25, 0, 0, 0, 0, 0), sampling(1f, 3, 0.6f, 0f, 1f), logitsOf(P));
    }

    @Test
    void minPDropsTokensBelowAFractionOfTheTop() {
        // 0.3 × 0.40 = 0.12: 0.40, 0.25 and 0.15 stay.
        assertDistribution(normalised(0.40, 0.25, 0.15, 0, 0, 0, 0), sampling(1f, 0, 1f, 0.3f, 1f), logitsOf(P));
        // 0.1 × 0.40 = 0.04: 0.05 stays, 0.03 goes.
        assertDistribution(normalised(0.40, 0.25, 0.15, 0.10, 0.05, 0, 0), sampling(1f, 0, 1f, 0.1f, 1f),
                logitsOf(P));
    }

    @Test
    void minPCombinesWithTopKAndTopP() {
        // Top-5, then top-p 0.95 of {0.421, 0.263, 0.158, 0.105, 0.053} keeps all five, then min-p 0.2 (bar 0.08
        // of the original scale) drops 0.05.
        assertDistribution(normalised(0.40, 0.25, 0.15, 0.10, 0, 0, 0), sampling(1f, 5, 0.95f, 0.2f, 1f),
                logitsOf(P));
    }

    @Test
    void repetitionPenaltyDividesPositiveAndMultipliesNegativeLogits() {
        float[] logits = {2f, -1f, 0.5f, 1f};
        // Seen tokens 0 and 1 (token 1 three times, penalised once): 2 / 2 = 1, -1 × 2 = -2.
        int[] history = {1, 0, 1, 1};
        double[] expected = normalised(Math.exp(1), Math.exp(-2), Math.exp(0.5), Math.exp(1));
        assertDistribution(expected, new Sampler(sampling(1f, 0, 1f, 0f, 2f)), logits, history);
    }

    @Test
    void repetitionPenaltyLooksOnlyAtTheGivenHistoryLength() {
        float[] logits = {3f, 2f};
        int[] history = {0, 1};
        Sampler greedy = new Sampler(new SamplingParams(0f, 0, 1f, 0f, 4f, 0L));
        assertEquals(1, greedy.sample(logits, history, 1, 0), "only token 0 is penalised: 3 / 4 < 2");
        assertEquals(0, greedy.sample(logits, history, 2, 0), "both are penalised: 3 / 4 > 2 / 4");
    }

    @Test
    void greedyAppliesThePenaltyBeforeTheArgmax() {
        Sampler greedy = new Sampler(new SamplingParams(0f, 0, 1f, 0f, 2f, 0L));
        assertEquals(1, greedy.sample(new float[] {2f, 1.5f, -1f}, new int[] {0}, 1, 0), "2 / 2 = 1 < 1.5");
        assertEquals(1, greedy.sample(new float[] {-1f, -1.5f}, new int[] {0}, 1, 0), "-1 × 2 = -2 < -1.5");
        assertEquals(0, greedy.sample(new float[] {2f, 1.5f, -1f}), "without history there is no penalty");
    }

    /**
     * The logits after every penalty, written out from the definitions: Hugging Face's repetition penalty over each
     * distinct token of history[0..length), then OpenAI's logit[j] -= c[j] × frequency + (c[j] > 0) × presence with
     * c counting history[generatedFrom..length).
     */
    static float[] referencePenalized(float[] logits, int[] history, int length, int generatedFrom,
            SamplingParams params) {
        float[] out = logits.clone();
        for (int token : Arrays.stream(history, 0, length).distinct().toArray()) {
            float logit = logits[token];
            out[token] = logit > 0 ? logit / params.repeatPenalty() : logit * params.repeatPenalty();
        }
        int[] counts = new int[logits.length];
        for (int i = generatedFrom; i < length; i++) counts[history[i]]++;
        for (int j = 0; j < logits.length; j++) {
            if (counts[j] > 0) out[j] -= counts[j] * params.frequencyPenalty() + params.presencePenalty();
        }
        return out;
    }

    static int referenceArgmax(float[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
        return best;
    }

    @Test
    void penaltiesAreTheReferenceOnRandomLogitsAndHistories() {
        Random random = new Random(2026);
        int vocab = 40;
        SamplingParams greedy = new SamplingParams(0f, 0, 1f, 0f, 1.3f, 0.7f, 0.45f, 0L);
        SamplingParams sampled = new SamplingParams(0.9f, 12, 0.9f, 0.02f, 1.3f, -0.6f, 1.1f, 77L);
        SamplingParams sampledWithoutPenalties = new SamplingParams(0.9f, 12, 0.9f, 0.02f, 1f, 0f, 0f, 77L);
        Sampler greedySampler = new Sampler(greedy);
        Sampler penalizing = new Sampler(sampled), plain = new Sampler(sampledWithoutPenalties);
        int greedyChanged = 0;
        for (int trial = 0; trial < 500; trial++) {
            float[] logits = new float[vocab];
            for (int j = 0; j < vocab; j++) logits[j] = (float) (random.nextGaussian() * 1.5);
            int length = random.nextInt(30);
            int[] history = new int[length + 5]; // entries past length must be ignored
            for (int i = 0; i < history.length; i++) history[i] = random.nextInt(12); // small ids: many repeats
            int generatedFrom = random.nextInt(length + 1);
            float[] before = logits.clone();

            int expected = referenceArgmax(referencePenalized(logits, history, length, generatedFrom, greedy));
            assertEquals(expected, greedySampler.sample(logits, history, length, generatedFrom), "trial " + trial);
            if (expected != referenceArgmax(logits)) greedyChanged++;
            // Seeded sampling: the same draw as sampling the reference-penalised logits with the penalties off.
            float[] reference = referencePenalized(logits, history, length, generatedFrom, sampled);
            assertEquals(plain.sample(reference), penalizing.sample(logits, history, length, generatedFrom),
                    "trial " + trial);
            assertArrayEquals(before, logits, "the caller's logits are left as they were");
        }
        assertTrue(greedyChanged > 50, "the penalties changed the greedy token often enough: " + greedyChanged);
    }

    @Test
    void presencePenalisesOncePerTokenAndFrequencyPerOccurrence() {
        float[] logits = {3f, 2f, 1.5f};
        int[] generated = {0, 0, 0, 1}; // token 0 three times, token 1 once
        // presence 1: 3 - 1 = 2, 2 - 1 = 1, 1.5 → token 0 stays first.
        Sampler presence = new Sampler(new SamplingParams(0f, 0, 1f, 0f, 1f, 1f, 0f, 0L));
        assertEquals(0, presence.sample(logits, generated, 4, 0));
        // frequency 1: 3 - 3 = 0, 2 - 1 = 1, 1.5 → token 2.
        Sampler frequency = new Sampler(new SamplingParams(0f, 0, 1f, 0f, 1f, 0f, 1f, 0L));
        assertEquals(2, frequency.sample(logits, generated, 4, 0));
        // frequency 0.4: 3 - 1.2 = 1.8, 2 - 0.4 = 1.6, 1.5 → token 0; with presence 0.5 more: 1.3, 1.1, 1.5 → token 2.
        assertEquals(0, new Sampler(new SamplingParams(0f, 0, 1f, 0f, 1f, 0f, 0.4f, 0L))
                .sample(logits, generated, 4, 0));
        assertEquals(2, new Sampler(new SamplingParams(0f, 0, 1f, 0f, 1f, 0.5f, 0.4f, 0L))
                .sample(logits, generated, 4, 0));
        // A negative penalty favours what was generated: presence -1.5 lifts token 1 from 2 to 3.5, above token 0.
        assertEquals(1, new Sampler(new SamplingParams(0f, 0, 1f, 0f, 1f, -1.5f, 0f, 0L))
                .sample(new float[] {3f, 2f}, new int[] {1}, 1, 0));
    }

    @Test
    void theAdditivePenaltiesDoNotCountThePrompt() {
        float[] logits = {3f, 2f};
        int[] history = {0, 0, 0};
        Sampler frequency = new Sampler(new SamplingParams(0f, 0, 1f, 0f, 1f, 0f, 2f, 0L));
        assertEquals(0, frequency.sample(logits, history, 3, 3), "all three are prompt: no penalty");
        assertEquals(1, frequency.sample(logits, history, 3, 2), "the last one generated: 3 - 2 = 1 < 2");
        assertEquals(0, new Sampler(new SamplingParams(0f, 0, 1f, 0f, 1f, 1.5f, 0f, 0L)).sample(logits, history, 3, 3),
                "presence: nothing generated, nothing present");
    }

    @Test
    void greedyTakesTheFirstOfTiedMaxima() {
        Sampler greedy = new Sampler(SamplingParams.greedy());
        assertEquals(1, greedy.sample(new float[] {1f, 3f, 3f, 2f}));
        assertEquals(0, greedy.sample(new float[] {5f, 5f, 5f}));
        assertEquals(2, greedy.sample(new float[] {Float.NEGATIVE_INFINITY, -3f, 7f, 7f}));
    }

    @Test
    void topOneIsGreedyWithTiesToTheLowerIndex() {
        Sampler topOne = new Sampler(sampling(1f, 1, 1f, 0f, 1f));
        for (int i = 0; i < 100; i++) assertEquals(1, topOne.sample(new float[] {1f, 3f, 3f, 2f}));
    }

    private static float[] randomLogits(int vocab, long seed) {
        Random random = new Random(seed);
        float[] logits = new float[vocab];
        for (int i = 0; i < vocab; i++) logits[i] = (float) (random.nextGaussian() * 3);
        return logits;
    }

    private static int[] generate(SamplingParams params, int steps) {
        Sampler sampler = new Sampler(params);
        int[] tokens = new int[steps];
        for (int i = 0; i < steps; i++) tokens[i] = sampler.sample(randomLogits(1000, i), tokens, i, 0);
        return tokens;
    }

    @Test
    void theSameSeedReproducesTheSequenceAndAnotherSeedDoesNot() {
        SamplingParams params = new SamplingParams(1f, 0, 0.95f, 0.01f, 1.1f, 42L);
        int[] first = generate(params, 200);
        assertArrayEquals(first, generate(params, 200));
        SamplingParams otherSeed = params.withOverrides(null, null, null, null, null, null, null, 43L);
        assertFalse(Arrays.equals(first, generate(otherSeed, 200)));
    }

    @Test
    void topKOnAFullVocabularyNeverLeavesTheTopK() {
        int vocab = 151_936;
        float[] logits = randomLogits(vocab, 7);
        float[] sorted = logits.clone();
        Arrays.sort(sorted);
        float twentieth = sorted[vocab - 20]; // Gaussian logits: no ties
        Set<Integer> top20 = IntStream.range(0, vocab).filter(i -> logits[i] >= twentieth).boxed()
                .collect(Collectors.toSet());
        assertEquals(20, top20.size());
        Sampler sampler = new Sampler(new SamplingParams(5f, 20, 1f, 0f, 1f, 3L));
        Set<Integer> drawn = new java.util.HashSet<>();
        for (int i = 0; i < 1_000; i++) drawn.add(sampler.sample(logits));
        assertTrue(top20.containsAll(drawn), "drew outside the top 20: " + drawn);
        assertEquals(top20, drawn, "at temperature 5 each of the top 20 should show up in 1,000 draws");
    }

    @Test
    void topPOnAFullVocabularyMatchesASortedReference() {
        int vocab = 151_936;
        Random random = new Random(11);
        // Peaked (few tokens hold the mass), flat (nearly all tokens are in the nucleus), and one strong token over a
        // long tail that holds most of the mass: each takes a different way to the nucleus candidates.
        float[] peaked = randomLogits(vocab, 11);
        float[] flat = new float[vocab];
        float[] longTail = new float[vocab];
        for (int i = 0; i < vocab; i++) {
            flat[i] = (float) (random.nextGaussian() * 0.01);
            longTail[i] = (float) (-10 + random.nextGaussian() * 0.01);
        }
        longTail[1234] = 0f;
        assertSamplesStayInTheNucleus(peaked, 0.5f, 1f);
        assertSamplesStayInTheNucleus(flat, 0.5f, 0.7f);
        assertSamplesStayInTheNucleus(longTail, 0.5f, 1f);
    }

    private static void assertSamplesStayInTheNucleus(float[] logits, float topP, float temperature) {
        // Reference: sort the probabilities, add them up from the largest until they reach topP of the mass; the
        // nucleus is every token at least as likely as the last one added (Gaussian noise: no ties).
        int vocab = logits.length;
        double[] w = new double[vocab];
        double total = 0;
        for (int i = 0; i < vocab; i++) total += w[i] = Math.exp(logits[i] / temperature);
        double[] sorted = w.clone();
        Arrays.sort(sorted);
        double mass = 0;
        int last = vocab;
        while (mass < topP * total) mass += sorted[--last];
        double smallest = sorted[last];
        boolean[] nucleus = new boolean[vocab];
        int size = 0;
        for (int i = 0; i < vocab; i++) {
            if (w[i] >= smallest) {
                nucleus[i] = true;
                size++;
            }
        }
        assertTrue(size > 100, "a wide nucleus makes the test meaningful: " + size);
        Sampler sampler = new Sampler(new SamplingParams(temperature, 0, topP, 0f, 1f, 5L));
        Set<Integer> drawn = new java.util.HashSet<>();
        for (int i = 0; i < 20; i++) {
            int token = sampler.sample(logits);
            assertTrue(nucleus[token], "token " + token + " is outside the nucleus of " + size);
            drawn.add(token);
        }
        assertTrue(drawn.size() > 5, "draws spread over the nucleus: " + drawn.size());
    }

    @Test
    void topPCountsTheMassOfTokensTooUnlikelyToRank() {
        // Ten tokens of weight 1 and 19,990 of weight e^-9.5 ≈ 7.5e-5 (together 1.5): a total of 11.5, so top-p 0.75
        // needs 8.63, i.e. nine of the ten (the lower indices on ties). Forgetting the tail's mass would keep eight.
        float[] logits = new float[20_000];
        Arrays.fill(logits, -9.5f);
        Arrays.fill(logits, 0, 10, 0f);
        Sampler sampler = new Sampler(new SamplingParams(1f, 0, 0.75f, 0f, 1f, 9L));
        long[] counts = new long[10];
        for (int i = 0; i < 1_000; i++) {
            int token = sampler.sample(logits);
            assertTrue(token < 9, "token " + token + " is outside the nucleus {0..8}");
            counts[token]++;
        }
        for (int t = 0; t < 9; t++) assertTrue(counts[t] > 50, "token " + t + " drawn " + counts[t] + " times of ~111");
    }
}
