package fs.backend;

import java.util.Arrays;

/**
 * What the rotary embedding turns by: pair i of a head (dims i and i + headDim/2) at position p turns by the angle
 * {@code p · inverseFrequencies[i]}, and the rotated pair is multiplied by {@code attentionFactor} (YaRN's magnitude
 * correction, 1 for plain RoPE), as Hugging Face multiplies cos and sin by it. The model computes it once, in double,
 * from the config, and every backend rotates by this same table, so they agree whatever the RoPE variant.
 */
public record Rope(double[] inverseFrequencies, double attentionFactor) {

    public Rope {
        if (inverseFrequencies.length == 0) throw new IllegalArgumentException("rope needs at least one pair of dims");
        inverseFrequencies = inverseFrequencies.clone();
        for (double f : inverseFrequencies) {
            if (!(f > 0) || Double.isInfinite(f)) throw new IllegalArgumentException("inverse frequency " + f);
        }
        if (!(attentionFactor > 0) || Double.isInfinite(attentionFactor)) {
            throw new IllegalArgumentException("attention factor " + attentionFactor);
        }
    }

    /** Plain RoPE of a head of {@code headDim} (even) dims: inverse frequency i is theta^(-2i / headDim). */
    public static Rope plain(int headDim, double theta) {
        if (headDim <= 0 || headDim % 2 != 0) throw new IllegalArgumentException("rope needs an even headDim, got " + headDim);
        double[] inverse = new double[headDim / 2];
        for (int i = 0; i < inverse.length; i++) inverse[i] = Math.pow(theta, -2.0 * i / headDim);
        return new Rope(inverse, 1.0);
    }

    /** The head width this rope rotates: two dims per inverse frequency. */
    public int headDim() {
        return 2 * inverseFrequencies.length;
    }

    @Override
    public double[] inverseFrequencies() {
        return inverseFrequencies.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Rope other && Arrays.equals(inverseFrequencies, other.inverseFrequencies)
                && Double.compare(attentionFactor, other.attentionFactor) == 0;
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(inverseFrequencies) + Double.hashCode(attentionFactor);
    }

    @Override
    public String toString() {
        return "Rope" + Arrays.toString(inverseFrequencies) + " × " + attentionFactor;
    }
}
