package fs.generate;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Picks the next token from a row of logits. One sampler per generation: its random stream starts from the seed, so
 * the same seed and the same logits give the same tokens.
 *
 * <p>The steps, in Hugging Face's order ({@code generate}: logits processors, then the warpers temperature, top-k,
 * top-p, min-p):
 * <ol>
 *   <li>repetition penalty over every distinct token of the history (prompt and generated tokens): a logit &gt; 0 is
 *       divided by the penalty, any other is multiplied by it;</li>
 *   <li>OpenAI's additive penalties over the generated tokens only (as OpenAI and vLLM count them, not the prompt):
 *       {@code logit[j] -= c[j] × frequencyPenalty + (c[j] > 0 ? presencePenalty : 0)}, c[j] the times token j was
 *       generated so far;</li>
 *   <li>temperature 0 → argmax of the penalised logits (the first index on ties); no filter, no randomness;</li>
 *   <li>top-k: keep the k largest logits (ties go to the lower index);</li>
 *   <li>softmax of logit / temperature over what is left;</li>
 *   <li>top-p: keep the smallest set of most likely tokens whose probability adds up to ≥ p (at least one);</li>
 *   <li>min-p: drop the tokens whose probability is below min-p × the largest probability;</li>
 *   <li>renormalise and draw.</li>
 * </ol>
 * llama.cpp applies the temperature last, after its filters; here top-p sees the tempered distribution, as in
 * Hugging Face. (Top-k and min-p give the same set either way.)
 *
 * <p>Cost per token on a 151,936-entry vocabulary: with top-k, one pass through a k-entry heap and a sort of k keys;
 * without top-k but with top-p, a few passes and a sort of the tokens that can be in the nucleus (the whole vocabulary
 * only for very flat distributions); with neither, no sort at all. The penalties cost two passes over the history
 * (the additive ones count in a vocabulary-sized array that is left all zero again). Scratch arrays are allocated on
 * the first call and reused.
 */
public final class Sampler {
    private static final int[] NO_HISTORY = new int[0];
    /** Probability ratios to the top token tried as the floor of the nucleus candidates, before taking all. */
    private static final double[] NUCLEUS_FLOORS = {1e-4, 1e-8};

    private final SamplingParams params;
    private final SplittableRandom random;

    /** Logits after the penalties; the caller's array is never modified. */
    private float[] penalized = new float[0];
    /** Per token id, how often it was generated; all zero between calls (only the generated tokens' entries move). */
    private int[] generatedCounts = new int[0];
    /** Ranking keys (see {@link #rankKey}) of the candidates: a min-heap while selecting top-k, then sorted. */
    private long[] keys = new long[0];
    /** Token ids of the candidates, most likely first when ranked. */
    private int[] candidates = new int[0];
    /** Unnormalised probabilities exp((logit - max) / temperature) of the candidates; the largest is exactly 1. */
    private double[] weights = new double[0];
    /** Set by {@link #rankNucleusCandidates}. */
    private double nucleusLeftOutMass;

    public Sampler(SamplingParams params) {
        this.params = params;
        this.random = new SplittableRandom(params.seed());
    }

    public SamplingParams params() {
        return params;
    }

    /** The next token, without penalties (no history). */
    public int sample(float[] logits) {
        return sample(logits, NO_HISTORY, 0, 0);
    }

    /**
     * The next token given the logits of the last position and the first {@code historyLength} tokens of
     * {@code history}, of which those from {@code generatedFrom} on were generated (the ones before are the prompt).
     * The repetition penalty looks at the whole history, as Hugging Face passes it the prompt and the generated
     * tokens; the presence and frequency penalties only at the generated ones, as OpenAI and vLLM count them.
     */
    public int sample(float[] logits, int[] history, int historyLength, int generatedFrom) {
        if (generatedFrom < 0 || generatedFrom > historyLength) {
            throw new IllegalArgumentException("generatedFrom " + generatedFrom + " outside 0.." + historyLength);
        }
        float[] scores = logits;
        boolean repeat = params.repeatPenalty() != 1f && historyLength > 0;
        boolean additive = (params.presencePenalty() != 0f || params.frequencyPenalty() != 0f)
                && generatedFrom < historyLength;
        if (repeat || additive) {
            scores = copyToPenalized(logits);
            if (repeat) penalizeRepetition(logits, history, historyLength);
            if (additive) penalizeGenerated(history, generatedFrom, historyLength);
        }
        if (params.isGreedy()) return argmax(scores);

        int vocab = scores.length;
        int topK = params.topK();
        boolean ranked;
        int count;
        double leftOutMass = 0; // weight of the tokens top-p cannot keep, which were not ranked
        if (topK > 0 && topK < vocab) {
            count = selectTopK(scores, topK);
            ranked = true;
        } else if (params.topP() < 1f) {
            count = rankNucleusCandidates(scores);
            leftOutMass = nucleusLeftOutMass;
            ranked = true;
        } else {
            count = vocab;
            ensureCandidateCapacity(vocab);
            for (int i = 0; i < vocab; i++) candidates[i] = i;
            ranked = false;
        }

        float max = ranked ? scores[candidates[0]] : scores[argmax(scores)];
        double inverseTemperature = 1.0 / params.temperature();
        // Without top-p, min-p is the next filter: tokens clearly below its bar need no exp (the exact cut is below).
        double skipBelow = params.topP() >= 1f && params.minP() > 0f
                ? max + (Math.log(params.minP()) - 1e-3) * params.temperature()
                : Double.NEGATIVE_INFINITY;
        double total = 0;
        for (int i = 0; i < count; i++) {
            float score = scores[candidates[i]];
            double w = score < skipBelow ? 0 : Math.exp((score - max) * inverseTemperature);
            weights[i] = w;
            total += w;
        }

        if (params.topP() < 1f) {
            // Candidates are ranked here: keep the shortest prefix whose mass reaches topP of the total.
            double target = params.topP() * (total + leftOutMass);
            double kept = 0;
            int keep = 0;
            while (keep < count) {
                kept += weights[keep++];
                if (kept >= target) break;
            }
            count = keep;
            total = kept;
        }

        if (params.minP() > 0f) {
            // The most likely candidate has weight exactly 1 and always survives top-p, so the bar is minP itself.
            double bar = params.minP();
            total = 0;
            for (int i = 0; i < count; i++) {
                if (weights[i] < bar) weights[i] = 0;
                total += weights[i];
            }
        }

        double u = random.nextDouble() * total;
        int last = -1;
        for (int i = 0; i < count; i++) {
            if (weights[i] == 0) continue;
            last = i;
            u -= weights[i];
            if (u < 0) return candidates[i];
        }
        return candidates[last]; // rounding left u a hair above the sum: the last token with mass takes it
    }

    private float[] copyToPenalized(float[] logits) {
        if (penalized.length != logits.length) penalized = new float[logits.length];
        System.arraycopy(logits, 0, penalized, 0, logits.length);
        return penalized;
    }

    private void penalizeRepetition(float[] logits, int[] history, int historyLength) {
        float penalty = params.repeatPenalty();
        for (int i = 0; i < historyLength; i++) {
            int token = history[i];
            // Computed from the original logit, so a token seen many times is penalised once, as in Hugging Face.
            float logit = logits[token];
            penalized[token] = logit > 0 ? logit / penalty : logit * penalty;
        }
    }

    /** Subtracts the presence and frequency penalties of history[from..to) from the (already penalised) logits. */
    private void penalizeGenerated(int[] history, int from, int to) {
        if (generatedCounts.length != penalized.length) generatedCounts = new int[penalized.length];
        int[] counts = generatedCounts;
        for (int i = from; i < to; i++) counts[history[i]]++;
        for (int i = from; i < to; i++) {
            int token = history[i];
            int count = counts[token];
            if (count == 0) continue; // a repeat of a token already penalised in this pass
            penalized[token] -= count * params.frequencyPenalty() + params.presencePenalty();
            counts[token] = 0; // leaves the array all zero for the next call
        }
    }

    /** Index of the largest value, the first one on ties. */
    static int argmax(float[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) {
            if (values[i] > values[best]) best = i;
        }
        return best;
    }

    /**
     * A long that orders tokens by logit, then by lower index: a larger key is a more likely token. The float's bits
     * are made to sort as a signed int (negative floats have their magnitude bits flipped) and go in the high half.
     */
    private static long rankKey(float logit, int token) {
        int bits = Float.floatToIntBits(logit);
        bits ^= (bits >> 31) & 0x7fffffff;
        return ((long) bits << 32) | (Integer.MAX_VALUE - token);
    }

    private static int tokenOf(long key) {
        return Integer.MAX_VALUE - (int) key;
    }

    /** Fills candidates[0..k) with the k most likely tokens, most likely first. */
    private int selectTopK(float[] scores, int k) {
        ensureCandidateCapacity(k);
        selectTopK(scores, k, keys, candidates);
        return k;
    }

    /**
     * Writes the k most likely tokens of {@code scores} (k ≤ its length), most likely first and the lower id first on
     * equal scores, to {@code top[0..k)}: a single pass through a k-entry heap kept in {@code heap[0..k)}, so the
     * vocabulary is never sorted.
     */
    static void selectTopK(float[] scores, int k, long[] heap, int[] top) {
        for (int i = 0; i < k; i++) heap[i] = rankKey(scores[i], i);
        for (int i = k / 2 - 1; i >= 0; i--) siftDown(heap, i, k);
        // Most tokens lose to the heap's weakest entry on the logit alone; only they skip the key.
        float weakest = scores[tokenOf(heap[0])];
        for (int i = k; i < scores.length; i++) {
            if (scores[i] < weakest) continue;
            long key = rankKey(scores[i], i);
            if (key > heap[0]) {
                heap[0] = key;
                siftDown(heap, 0, k);
                weakest = scores[tokenOf(heap[0])];
            }
        }
        Arrays.sort(heap, 0, k);
        for (int i = 0; i < k; i++) top[i] = tokenOf(heap[k - 1 - i]);
    }

    /**
     * For top-p without top-k: fills candidates, most likely first, with every token that can be in the nucleus,
     * and sets {@link #nucleusLeftOutMass} to the weight of the others. The nucleus is a prefix of the ranking, so
     * any prefix that already holds topP of the mass contains it: the tokens within a factor 10⁻⁴ of the most likely
     * one usually do, and then only those (a few thousand, not the whole vocabulary) are sorted.
     */
    private int rankNucleusCandidates(float[] scores) {
        ensureCandidateCapacity(scores.length);
        float max = scores[argmax(scores)];
        double inverseTemperature = 1.0 / params.temperature();
        double total = 0;
        for (float score : scores) total += Math.exp((score - max) * inverseTemperature);
        double target = params.topP() * total;
        float floor = Float.NEGATIVE_INFINITY;
        double mass = total;
        for (double ratio : NUCLEUS_FLOORS) {
            float candidateFloor = (float) (max + Math.log(ratio) * params.temperature());
            double above = 0;
            for (float score : scores) {
                if (score >= candidateFloor) above += Math.exp((score - max) * inverseTemperature);
            }
            if (above >= target) {
                floor = candidateFloor;
                mass = above;
                break;
            }
        }
        int n = 0;
        for (int i = 0; i < scores.length; i++) {
            if (scores[i] >= floor) keys[n++] = rankKey(scores[i], i);
        }
        Arrays.sort(keys, 0, n);
        for (int i = 0; i < n; i++) candidates[i] = tokenOf(keys[n - 1 - i]);
        nucleusLeftOutMass = total - mass;
        return n;
    }

    /** Restores the min-heap property below {@code i} in heap[0..size). */
    private static void siftDown(long[] heap, int i, int size) {
        long key = heap[i];
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) break;
            if (child + 1 < size && heap[child + 1] < heap[child]) child++;
            if (heap[child] >= key) break;
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = key;
    }

    private void ensureCandidateCapacity(int n) {
        if (candidates.length < n) {
            candidates = new int[n];
            weights = new double[n];
            keys = new long[n];
        }
    }
}
