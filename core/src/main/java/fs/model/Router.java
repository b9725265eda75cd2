package fs.model;

import fs.backend.ExpertRouting;
import java.util.Arrays;

/**
 * Hugging Face's Qwen3-MoE routing, for each row of router logits: softmax over every expert, the {@code used} most
 * probable, renormalized to sum to one when asked. Probabilities are computed in double and the weights given as
 * float (Hugging Face computes them in float32; the difference is far below what the experts' outputs carry).
 *
 * <p>Ties: of two experts with equal probability the lower index ranks first. Neither torch.topk on the CPU nor
 * llama.cpp's top_k (std::partial_sort) orders exact ties in a defined way (torch 1.13 returned experts 6, 5, 4 of
 * eight equal probabilities: tools/reference/README.md), so fs and its float64 reference take this deterministic rule,
 * and the goldens keep every routing decision clear of a tie.
 */
final class Router {
    private Router() {}

    static ExpertRouting route(float[] logits, int rows, FeedForward.Experts experts) {
        int count = experts.count(), used = experts.used();
        int[] chosen = new int[rows * used];
        float[] weights = new float[rows * used];
        double[] p = new double[count];
        boolean[] taken = new boolean[count];
        for (int r = 0; r < rows; r++) {
            int base = r * count;
            double max = Double.NEGATIVE_INFINITY;
            for (int e = 0; e < count; e++) max = Math.max(max, logits[base + e]);
            double sum = 0;
            for (int e = 0; e < count; e++) sum += p[e] = Math.exp(logits[base + e] - max);
            for (int e = 0; e < count; e++) p[e] /= sum;
            Arrays.fill(taken, false);
            double chosenSum = 0;
            for (int j = 0; j < used; j++) {
                int best = -1;
                for (int e = 0; e < count; e++) {
                    if (!taken[e] && (best < 0 || p[e] > p[best])) best = e; // strictly greater: the lower index on ties
                }
                taken[best] = true;
                chosenSum += p[best];
            }
            // Slots in ascending expert order: the order the outputs are summed in.
            for (int e = 0, j = 0; e < count; e++) {
                if (!taken[e]) continue;
                chosen[r * used + j] = e;
                weights[r * used + j] = (float) (experts.normalizeTopK() ? p[e] / chosenSum : p[e]);
                j++;
            }
        }
        return new ExpertRouting(rows, used, count, chosen, weights);
    }
}
