package fs.format;

import static fs.format.QuantMath.half;
import static fs.format.QuantMath.halfValue;
import static fs.format.QuantMath.nearestInt;
import static fs.format.QuantMath.putHalf;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What Q4_K and Q5_K share, block by block: 8 groups of 32 weights, each with a 6-bit scale and a 6-bit min under
 * the block's f16 d and dmin, and every weight's level (0..nmax) requantized against the stored values. The two
 * formats differ only in nmax, the search's parameters and how the levels are packed.
 *
 * <p>Scratch for one call of a quantizer, confined to its thread: {@link #levels}, {@link #d} and {@link #dmin}
 * hold the last block's result.
 */
final class ScaleMinSearch {
    private static final int QK = DType.Q4_K.blockElements(); // Q5_K's too
    private static final int GROUPS = QK / 32;

    /** The last block's 256 levels. */
    final int[] levels = new int[QK];
    /** The last block's f16 scales. */
    short d;
    short dmin;

    private final int[] aux = new int[32];
    private final float[] weights = new float[32];
    private final float[] scales = new float[GROUPS];
    private final float[] mins = new float[GROUPS];
    private final float[] groupWeights = new float[GROUPS];
    private final int[] scaleLevels = new int[GROUPS];
    private final int[] minLevels = new int[GROUPS];

    /**
     * quantize_row_q4_K_ref's and quantize_row_q5_K_ref's first half: make_qkx2_quants per group, weighted by the
     * group's rms + |x|, then the scales and mins rounded to 6 bits of the largest of each; packs them at
     * {@code out[scalesAt]}.
     */
    void reference(float[] x, int at, int nmax, float rmin, float rdelta, int nstep, byte[] out, int scalesAt) {
        float maxScale = 0;
        float maxMin = 0;
        for (int j = 0; j < GROUPS; j++) {
            int g = at + 32 * j;
            float sumX2 = 0;
            for (int l = 0; l < 32; l++) sumX2 += x[g + l] * x[g + l];
            float avX = (float) Math.sqrt(sumX2 / 32);
            for (int l = 0; l < 32; l++) weights[l] = avX + Math.abs(x[g + l]);
            scales[j] = QuantMath.makeQkxQuants(32, nmax, x, g, weights, levels, 32 * j, mins, j, aux,
                    rmin, rdelta, nstep, false);
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }
        float invScale = maxScale > 0 ? 63f / maxScale : 0f;
        float invMin = maxMin > 0 ? 63f / maxMin : 0f;
        for (int j = 0; j < GROUPS; j++) {
            int ls = Math.min(63, nearestInt(invScale * scales[j]) & 0xFF); // uint8_t ls = nearest_int(...)
            int lm = Math.min(63, nearestInt(invMin * mins[j]) & 0xFF);
            QuantMath.packScaleMin(out, scalesAt, j, ls, lm);
        }
        d = half(maxScale / 63f);
        dmin = half(maxMin / 63f);
    }

    /**
     * quantize_row_q4_K_impl's and quantize_row_q5_K_impl's first half: make_qkx3_quants per group weighted by
     * importance × √(σ² + x²) (σ² twice the block's mean square), then make_qp_quants fits the 8 scales and the 8
     * mins, weighted by each group's total weight. {@code clampLevels}: Q5_K's clamps the fitted levels to 63,
     * Q4_K's does not (they differ only if a scale came out negative).
     */
    void weighted(float[] x, int at, float[] importance, int column, int nmax, boolean clampLevels, byte[] out,
            int scalesAt) {
        float sumX2 = 0;
        for (int l = 0; l < QK; l++) sumX2 += x[at + l] * x[at + l];
        float sigma2 = 2 * sumX2 / QK;
        for (int j = 0; j < GROUPS; j++) {
            int g = at + 32 * j;
            for (int l = 0; l < 32; l++) {
                weights[l] = importance[column + 32 * j + l] * (float) Math.sqrt(sigma2 + x[g + l] * x[g + l]);
            }
            float sumW = 0;
            for (int l = 0; l < 32; l++) sumW += weights[l];
            groupWeights[j] = sumW;
            scales[j] = QuantMath.makeQkxQuants(32, nmax, x, g, weights, levels, 32 * j, mins, j, aux,
                    -0.9f, 0.05f, 36, false);
        }
        float dBlock = QuantMath.makeQpQuants(GROUPS, 63, scales, scaleLevels, groupWeights);
        float mBlock = QuantMath.makeQpQuants(GROUPS, 63, mins, minLevels, groupWeights);
        for (int j = 0; j < GROUPS; j++) {
            int ls = clampLevels ? Math.min(63, scaleLevels[j]) : scaleLevels[j];
            int lm = clampLevels ? Math.min(63, minLevels[j]) : minLevels[j];
            QuantMath.packScaleMin(out, scalesAt, j, ls, lm);
        }
        d = half(dBlock);
        dmin = half(mBlock);
    }

    /** Both paths' second half: each weight's level against the stored d·scale and dmin·min, 0..nmax. */
    void requantize(float[] x, int at, int nmax, byte[] out, int scalesAt) {
        for (int j = 0; j < GROUPS; j++) {
            int packed = QuantMath.scaleMin(out, scalesAt, j);
            float dj = halfValue(d) * (packed & 0xFF);
            if (dj == 0) continue; // keeps the search's levels, as llama.cpp does
            float mj = halfValue(dmin) * (packed >> 8);
            for (int i = 32 * j; i < 32 * j + 32; i++) {
                levels[i] = Math.max(0, Math.min(nmax, nearestInt((x[at + i] + mj) / dj)));
            }
        }
    }

    /** Writes a block's 256 levels into its bytes at {@code block[at]} (d, dmin and the scales are already there). */
    interface LevelPacker {
        void pack(int[] levels, byte[] block, int at);
    }

    /**
     * The loop quantize_q4_K and quantize_q5_K share: per block of 256, the reference search ({@code rmin},
     * {@code nstep} steps of 0.1) or, with importance, the weighted one ({@code clampLevels} as
     * {@link #weighted}); then d and dmin, the requantized levels and the format's packing of them; a row at a time
     * into {@code out}.
     */
    static void quantizeRows(DType type, int nmax, float rmin, int nstep, boolean clampLevels,
                             LevelPacker packer, float[] weights, int rows, int columns, float[] importance,
                             MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(type, weights, rows, columns, importance, out, outOffset);
        int blockBytes = type.blockBytes();
        byte[] row = new byte[columns / QK * blockBytes];
        ScaleMinSearch s = new ScaleMinSearch();
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / QK; b++) {
                int at = r * columns + b * QK;
                int o = b * blockBytes;
                if (importance == null) {
                    s.reference(weights, at, nmax, rmin, 0.1f, nstep, row, o + 4);
                } else {
                    s.weighted(weights, at, importance, b * QK, nmax, clampLevels, row, o + 4);
                }
                putHalf(row, o, s.d);
                putHalf(row, o + 2, s.dmin);
                s.requantize(weights, at, nmax, row, o + 4);
                packer.pack(s.levels, row, o);
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }
}
