package fs.backend;

import java.util.Arrays;

/**
 * Which experts each row of a batch runs, and with what weight: row r's slots are r·used .. r·used + used - 1, each
 * one expert and its weight, in ascending expert order (the order Hugging Face sums the experts' outputs in). Also
 * the slots grouped by expert, in row order within an expert, so that an expert matmul reads each chosen expert's
 * matrix once for the whole batch. Immutable.
 */
public final class ExpertRouting {
    private final int rows;
    private final int used;
    private final int[] experts;
    private final float[] weights;
    private final int[] groupStart;
    private final int[] groupedSlots;

    /**
     * @param experts the expert of each slot, rows × used, ascending within a row, each in 0..expertCount-1
     * @param weights the weight of each slot
     */
    public ExpertRouting(int rows, int used, int expertCount, int[] experts, float[] weights) {
        if (experts.length != rows * used || weights.length != rows * used) {
            throw new IllegalArgumentException(rows + " rows of " + used + " experts need " + rows * used
                    + " slots, got " + experts.length + " experts and " + weights.length + " weights");
        }
        this.rows = rows;
        this.used = used;
        this.experts = experts.clone();
        this.weights = weights.clone();
        groupStart = new int[expertCount + 1];
        for (int s = 0; s < experts.length; s++) {
            int e = experts[s];
            if (e < 0 || e >= expertCount) throw new IllegalArgumentException("expert " + e + " outside 0.." + (expertCount - 1));
            if (s % used > 0 && experts[s - 1] >= e) {
                throw new IllegalArgumentException("row " + s / used + "'s experts are not distinct and ascending");
            }
            groupStart[e + 1]++;
        }
        for (int e = 0; e < expertCount; e++) groupStart[e + 1] += groupStart[e];
        groupedSlots = new int[experts.length];
        int[] next = Arrays.copyOf(groupStart, expertCount);
        for (int s = 0; s < experts.length; s++) groupedSlots[next[experts[s]]++] = s;
    }

    public int rows() {
        return rows;
    }

    /** Experts per row. */
    public int used() {
        return used;
    }

    /** rows × used. */
    public int slots() {
        return experts.length;
    }

    /** The number of experts a row may choose from. */
    public int expertCount() {
        return groupStart.length - 1;
    }

    public int expert(int slot) {
        return experts[slot];
    }

    public float weight(int slot) {
        return weights[slot];
    }

    /** The slots that run expert {@code e}, in row order: {@link #groupedSlot}(i) for i in [groupStart(e), groupEnd(e)). */
    public int groupStart(int e) {
        return groupStart[e];
    }

    public int groupEnd(int e) {
        return groupStart[e + 1];
    }

    public int groupedSlot(int i) {
        return groupedSlots[i];
    }
}
