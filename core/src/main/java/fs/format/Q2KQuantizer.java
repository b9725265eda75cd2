package fs.format;

import static fs.format.QuantMath.half;
import static fs.format.QuantMath.halfValue;
import static fs.format.QuantMath.nearestInt;
import static fs.format.QuantMath.putHalf;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Q2_K, as ggml-quants.c's quantize_q2_K: 16 groups of 16 weights on levels 0..3, each with a 4-bit scale and min.
 * Without importance quantize_row_q2_K_ref (make_qkx2_quants weighted by |x|, minimizing the absolute error, the
 * scales and mins scaled to the block's largest), with it quantize_row_q2_K_impl (make_qkx3_quants weighted by
 * importance × √(σ² + x²), the scales and mins fitted by make_qp_quants). Layout: {@link ReferenceDequantizer}'s
 * q2_k.
 */
final class Q2KQuantizer implements RowQuantizer {
    static final Q2KQuantizer INSTANCE = new Q2KQuantizer();

    private static final int QK = DType.Q2_K.blockElements();
    private static final int GROUPS = QK / 16;
    private static final int BLOCK_BYTES = DType.Q2_K.blockBytes();

    private Q2KQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(DType.Q2_K, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / QK * BLOCK_BYTES];
        Scratch s = new Scratch();
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / QK; b++) {
                int at = r * columns + b * QK;
                int o = b * BLOCK_BYTES;
                if (importance == null) {
                    reference(weights, at, row, o, s);
                } else {
                    weighted(weights, at, importance, b * QK, row, o, s);
                }
                requantize(weights, at, row, o, s.levels);
                for (int j = 0; j < QK; j += 128) {
                    for (int l = 0; l < 32; l++) {
                        int[] q = s.levels;
                        row[o + 16 + j / 4 + l] =
                                (byte) (q[j + l] | q[j + l + 32] << 2 | q[j + l + 64] << 4 | q[j + l + 96] << 6);
                    }
                }
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }

    /** One call's scratch. */
    private static final class Scratch {
        final int[] levels = new int[QK];
        final int[] aux = new int[16];
        final float[] weights = new float[16];
        final float[] scales = new float[GROUPS];
        final float[] mins = new float[GROUPS];
        final float[] groupWeights = new float[GROUPS];
        final int[] scaleLevels = new int[GROUPS];
        final int[] minLevels = new int[GROUPS];
    }

    /** quantize_row_q2_K_ref up to the requantization: the scale bytes at 0, d at 80, dmin at 82. */
    private static void reference(float[] x, int at, byte[] out, int o, Scratch s) {
        float maxScale = 0;
        float maxMin = 0;
        for (int j = 0; j < GROUPS; j++) {
            for (int l = 0; l < 16; l++) s.weights[l] = Math.abs(x[at + 16 * j + l]);
            s.scales[j] = QuantMath.makeQkxQuants(16, 3, x, at + 16 * j, s.weights, s.levels, 16 * j, s.mins, j,
                    s.aux, -0.5f, 0.1f, 15, true);
            if (s.scales[j] > maxScale) maxScale = s.scales[j];
            if (s.mins[j] > maxMin) maxMin = s.mins[j];
        }
        if (maxScale > 0) {
            float iscale = 15f / maxScale;
            for (int j = 0; j < GROUPS; j++) out[o + j] = (byte) nearestInt(iscale * s.scales[j]);
            putHalf(out, o + 80, half(maxScale / 15f));
        } else {
            for (int j = 0; j < GROUPS; j++) out[o + j] = 0;
            putHalf(out, o + 80, half(0f));
        }
        if (maxMin > 0) {
            float iscale = 15f / maxMin;
            for (int j = 0; j < GROUPS; j++) out[o + j] |= (byte) (nearestInt(iscale * s.mins[j]) << 4);
            putHalf(out, o + 82, half(maxMin / 15f));
        } else {
            putHalf(out, o + 82, half(0f));
        }
    }

    /** quantize_row_q2_K_impl up to the requantization. */
    private static void weighted(float[] x, int at, float[] importance, int column, byte[] out, int o, Scratch s) {
        float sumX2 = 0;
        for (int j = 0; j < QK; j++) sumX2 += x[at + j] * x[at + j];
        float sigma2 = sumX2 / QK;
        for (int j = 0; j < GROUPS; j++) {
            int g = at + 16 * j;
            for (int l = 0; l < 16; l++) {
                s.weights[l] = importance[column + 16 * j + l] * (float) Math.sqrt(sigma2 + x[g + l] * x[g + l]);
            }
            float sumW = 0;
            for (int l = 0; l < 16; l++) sumW += s.weights[l];
            s.groupWeights[j] = sumW;
            s.scales[j] = QuantMath.makeQkxQuants(16, 3, x, g, s.weights, s.levels, 16 * j, s.mins, j, s.aux,
                    -0.9f, 0.05f, 36, false);
        }
        float dm = QuantMath.makeQpQuants(GROUPS, 15, s.scales, s.scaleLevels, s.groupWeights);
        float mm = QuantMath.makeQpQuants(GROUPS, 15, s.mins, s.minLevels, s.groupWeights);
        putHalf(out, o + 80, half(dm));
        putHalf(out, o + 82, half(mm));
        for (int j = 0; j < GROUPS; j++) out[o + j] = (byte) (s.scaleLevels[j] | s.minLevels[j] << 4);
    }

    /** Both paths' end: each weight's level 0..3 against the stored scales and mins. */
    private static void requantize(float[] x, int at, byte[] out, int o, int[] levels) {
        float d = halfValue(shortAt(out, o + 80));
        float dmin = halfValue(shortAt(out, o + 82));
        for (int j = 0; j < GROUPS; j++) {
            int packed = out[o + j] & 0xFF;
            float dj = d * (packed & 0xF);
            if (dj == 0) continue; // keeps the search's levels, as llama.cpp does
            float mj = dmin * (packed >> 4);
            for (int i = 16 * j; i < 16 * j + 16; i++) {
                levels[i] = Math.max(0, Math.min(3, nearestInt((x[at + i] + mj) / dj)));
            }
        }
    }

    private static short shortAt(byte[] b, int at) {
        return (short) (b[at] & 0xFF | b[at + 1] << 8);
    }
}
