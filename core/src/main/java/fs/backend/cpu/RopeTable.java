package fs.backend.cpu;

import fs.backend.Rope;

/**
 * cos and sin of the rotary angles of one {@link Rope}, times its attention factor, grown on demand to the positions
 * used. Angles are computed in double and rounded once to float, so the table matches a float64 reference to float
 * precision even at large positions (float32 angles lose about a thousandth of a radian by position 10⁴).
 */
final class RopeTable {
    private final int half;
    private final double[] inverseFrequencies;
    private final double attentionFactor;
    private float[] cos = new float[0];
    private float[] sin = new float[0];
    private int positions;

    RopeTable(Rope rope) {
        inverseFrequencies = rope.inverseFrequencies();
        half = inverseFrequencies.length;
        attentionFactor = rope.attentionFactor();
    }

    /** Makes positions 0 until {@code needed} available. */
    void ensure(int needed) {
        if (needed <= positions) return;
        int capacity = Math.max(needed, Math.max(2 * positions, 64));
        float[] newCos = new float[capacity * half];
        float[] newSin = new float[capacity * half];
        System.arraycopy(cos, 0, newCos, 0, positions * half);
        System.arraycopy(sin, 0, newSin, 0, positions * half);
        for (int p = positions; p < capacity; p++) {
            for (int i = 0; i < half; i++) {
                double angle = p * inverseFrequencies[i];
                newCos[p * half + i] = (float) (Math.cos(angle) * attentionFactor);
                newSin[p * half + i] = (float) (Math.sin(angle) * attentionFactor);
            }
        }
        cos = newCos;
        sin = newSin;
        positions = capacity;
    }

    /** cos of position p, pair i, at {@code p · headDim/2 + i}. */
    float[] cos() {
        return cos;
    }

    float[] sin() {
        return sin;
    }
}
