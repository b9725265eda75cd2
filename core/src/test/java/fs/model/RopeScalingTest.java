package fs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.backend.Rope;
import org.junit.jupiter.api.Test;

/**
 * YaRN's table against values from the float64 reference (tools/reference/qwen3_reference.py rope_parameters, written
 * from transformers' _compute_yarn_parameters): each pair's inverse frequency as a ratio to plain RoPE's.
 */
class RopeScalingTest {
    private static final double THETA = 1_000_000;

    private static double[] ratiosToPlain(Rope rope) {
        double[] plain = Rope.plain(rope.headDim(), THETA).inverseFrequencies();
        double[] ratios = rope.inverseFrequencies();
        for (int i = 0; i < ratios.length; i++) ratios[i] /= plain[i];
        return ratios;
    }

    @Test
    void qwen3sDocumentedYarnKeepsFastPairsDividesSlowOnesAndRampsBetween() {
        // Qwen3-0.6B's head (128 dims) with factor 4 over 32768 positions: the correction dims are 23.6 (beta_fast 32)
        // and 39.65 (beta_slow 1), truncated outward to 23 and 40.
        Rope rope = new RopeScaling.Yarn(4, 32768, 32, 1, 1 + 0.1 * Math.log(4), true).rope(128, THETA);
        double[] ratios = ratiosToPlain(rope);
        for (int i = 0; i < ratios.length; i++) {
            double kept = 1 - Math.clamp((i - 23) / 17.0, 0, 1);
            assertEquals(kept + (1 - kept) / 4, ratios[i], 1e-12, "pair " + i);
        }
        assertEquals(0.955882352941, ratios[24], 1e-12); // the reference's own value: the loop is not the only witness
        assertEquals(1.138629436111989, rope.attentionFactor(), 1e-15);
    }

    @Test
    void untruncatedRampStartsAndEndsBetweenPairs() {
        Rope rope = new RopeScaling.Yarn(4, 4096, 32, 1, 1.138629436111989, false).rope(16, THETA);
        assertArrayEquals(new double[] {1, 1, 0.904841759229, 0.531124848555, 0.25, 0.25, 0.25, 0.25},
                ratiosToPlain(rope), 1e-12);
    }

    @Test
    void deepSeekStyleMscalesAndBetas() {
        double attention = RopeScaling.Yarn.defaultAttentionFactor(40, 0.707, 1.0);
        assertEquals(0.9210423553163399, attention, 1e-15);
        Rope rope = new RopeScaling.Yarn(40, 4096, 8, 2, attention, true).rope(16, THETA);
        assertArrayEquals(new double[] {1, 1, 1, 0.5125, 0.025, 0.025, 0.025, 0.025}, ratiosToPlain(rope), 1e-12);
    }

    @Test
    void defaultAttentionFactorIsTheLogOfTheFactorAndOneWithoutScaling() {
        assertEquals(1 + 0.1 * Math.log(4), RopeScaling.Yarn.defaultAttentionFactor(4, 0, 0), 1e-15);
        assertEquals(1 + 0.1 * Math.log(4), RopeScaling.Yarn.defaultAttentionFactor(4, 0.707, 0), 1e-15); // needs both
        assertEquals(1.0, RopeScaling.Yarn.defaultAttentionFactor(1, 0, 0));
        assertEquals(1.0, RopeScaling.Yarn.defaultAttentionFactor(1, 0.707, 1));
    }

    @Test
    void aFactorOfOneIsPlainRope() {
        Rope rope = new RopeScaling.Yarn(1, 32768, 32, 1, 1, true).rope(128, THETA);
        double[] ones = new double[64];
        java.util.Arrays.fill(ones, 1);
        assertArrayEquals(ones, ratiosToPlain(rope), 1e-15);
        assertEquals(1.0, rope.attentionFactor());
        assertEquals(Rope.plain(128, THETA), new RopeScaling.Plain().rope(128, THETA));
    }
}
