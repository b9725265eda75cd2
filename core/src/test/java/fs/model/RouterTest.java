package fs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.backend.ExpertRouting;
import org.junit.jupiter.api.Test;

/** Hugging Face's routing: softmax over every expert, the top k, renormalized or not, and how ties are broken. */
class RouterTest {

    private static int[] experts(ExpertRouting routing, int row) {
        int[] chosen = new int[routing.used()];
        for (int j = 0; j < chosen.length; j++) chosen[j] = routing.expert(row * routing.used() + j);
        return chosen;
    }

    private static double[] softmax(float... logits) {
        double max = Double.NEGATIVE_INFINITY, sum = 0;
        for (float l : logits) max = Math.max(max, l);
        double[] p = new double[logits.length];
        for (int i = 0; i < p.length; i++) sum += p[i] = Math.exp(logits[i] - max);
        for (int i = 0; i < p.length; i++) p[i] /= sum;
        return p;
    }

    @Test
    void theMostProbableExpertsInAscendingOrderRenormalized() {
        float[] logits = {0.5f, 3f, -1f, 2f, 2.5f};
        ExpertRouting routing = Router.route(logits, 1, new FeedForward.Experts(5, 3, 8, true));
        assertArrayEquals(new int[] {1, 3, 4}, experts(routing, 0), "the top 3, in expert order");
        double[] p = softmax(logits);
        double chosen = p[1] + p[3] + p[4];
        assertEquals(p[1] / chosen, routing.weight(0), 1e-7);
        assertEquals(p[3] / chosen, routing.weight(1), 1e-7);
        assertEquals(p[4] / chosen, routing.weight(2), 1e-7);
    }

    @Test
    void withoutNormalizationTheWeightsAreTheSoftmaxOverEveryExpert() {
        float[] logits = {0.5f, 3f, -1f, 2f, 2.5f};
        ExpertRouting routing = Router.route(logits, 1, new FeedForward.Experts(5, 2, 8, false));
        assertArrayEquals(new int[] {1, 4}, experts(routing, 0));
        double[] p = softmax(logits);
        assertEquals(p[1], routing.weight(0), 1e-7);
        assertEquals(p[4], routing.weight(1), 1e-7);
    }

    /** torch.topk and llama.cpp's stable argsort both rank the lower index first among equal probabilities. */
    @Test
    void tiesGoToTheLowerIndex() {
        float[] logits = {1f, 4f, 2f, 4f, 2f, 2f};
        ExpertRouting routing = Router.route(logits, 1, new FeedForward.Experts(6, 3, 8, true));
        assertArrayEquals(new int[] {1, 2, 3}, experts(routing, 0), "of the three 2s, expert 2 is taken");
        ExpertRouting all = Router.route(new float[] {0f, 0f, 0f, 0f}, 1, new FeedForward.Experts(4, 2, 8, true));
        assertArrayEquals(new int[] {0, 1}, experts(all, 0));
        assertEquals(0.5f, all.weight(0));
        assertEquals(0.5f, all.weight(1));
    }

    @Test
    void eachRowIsRoutedOnItsOwnAndTheSlotsAreGroupedByExpert() {
        float[] logits = {
            5f, 4f, 0f, 0f, // row 0: experts 0, 1
            0f, 4f, 5f, 0f, // row 1: experts 1, 2
            5f, 0f, 0f, 4f, // row 2: experts 0, 3
        };
        ExpertRouting routing = Router.route(logits, 3, new FeedForward.Experts(4, 2, 8, true));
        assertArrayEquals(new int[] {0, 1}, experts(routing, 0));
        assertArrayEquals(new int[] {1, 2}, experts(routing, 1));
        assertArrayEquals(new int[] {0, 3}, experts(routing, 2));
        // expert 0 runs slots 0 (row 0) and 4 (row 2); expert 1 slots 1 and 2; expert 2 slot 3; expert 3 slot 5
        int[] grouped = new int[routing.slots()];
        for (int i = 0; i < grouped.length; i++) grouped[i] = routing.groupedSlot(i);
        assertArrayEquals(new int[] {0, 4, 1, 2, 3, 5}, grouped);
        assertArrayEquals(new int[] {0, 2, 4, 5, 6}, new int[] {routing.groupStart(0), routing.groupStart(1),
                routing.groupStart(2), routing.groupStart(3), routing.groupEnd(3)});
        assertEquals(1 / (1 + Math.exp(-1)), routing.weight(0), 1e-7, "e^5 / (e^5 + e^4)");
    }
}
