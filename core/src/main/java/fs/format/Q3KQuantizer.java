package fs.format;

import static fs.format.QuantMath.half;
import static fs.format.QuantMath.halfValue;
import static fs.format.QuantMath.nearestInt;
import static fs.format.QuantMath.putHalf;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Q3_K, as ggml-quants.c's quantize_q3_K (llama.cpp's Q2_K preset stores several matrices in it): 16 groups of 16
 * weights on levels −4..3 with a signed 6-bit scale each. Without importance quantize_row_q3_K_ref (make_q3_quants
 * per group, the scales rounded against the largest), with it quantize_row_q3_K_impl (make_qx_quants weighted by
 * importance × √(σ² + x²), and again over the scales). Layout: {@link ReferenceDequantizer}'s q3_k.
 */
final class Q3KQuantizer implements RowQuantizer {
    static final Q3KQuantizer INSTANCE = new Q3KQuantizer();

    private static final int QK = DType.Q3_K.blockElements();
    private static final int GROUPS = QK / 16;
    private static final int BLOCK_BYTES = DType.Q3_K.blockBytes();
    private static final int SCALES = 96;

    private Q3KQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(DType.Q3_K, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / QK * BLOCK_BYTES];
        int[] levels = new int[QK];
        float[] scales = new float[GROUPS];
        float[] weight = new float[16];
        float[] groupWeights = new float[GROUPS];
        int[] scaleLevels = new int[GROUPS];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / QK; b++) {
                int at = r * columns + b * QK;
                int o = b * BLOCK_BYTES;
                for (int k = 0; k < 12; k++) row[o + SCALES + k] = 0;
                if (importance == null) {
                    reference(weights, at, row, o, levels, scales);
                } else {
                    weighted(weights, at, importance, b * QK, row, o, levels, scales, weight, groupWeights,
                            scaleLevels);
                }
                requantizeAndPack(weights, at, row, o, levels);
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }

    /** quantize_row_q3_K_ref up to the requantization: the scales and d. */
    private static void reference(float[] x, int at, byte[] out, int o, int[] levels, float[] scales) {
        float maxScale = 0;
        float amax = 0;
        for (int j = 0; j < GROUPS; j++) {
            scales[j] = QuantMath.makeQ3Quants(16, 4, x, at + 16 * j, levels, 16 * j);
            if (Math.abs(scales[j]) > amax) {
                amax = Math.abs(scales[j]);
                maxScale = scales[j];
            }
        }
        if (maxScale != 0) {
            float iscale = -32f / maxScale;
            for (int j = 0; j < GROUPS; j++) {
                int l = (byte) nearestInt(iscale * scales[j]); // int8_t l = nearest_int(...)
                packScale(out, o, j, Math.max(-32, Math.min(31, l)) + 32);
            }
            putHalf(out, o + 108, half(1 / iscale));
        } else {
            putHalf(out, o + 108, half(0f));
        }
    }

    /** quantize_row_q3_K_impl up to the requantization. */
    private static void weighted(float[] x, int at, float[] importance, int column, byte[] out, int o, int[] levels,
            float[] scales, float[] weight, float[] groupWeights, int[] scaleLevels) {
        float sumX2 = 0;
        for (int j = 0; j < QK; j++) sumX2 += x[at + j] * x[at + j];
        float sigma2 = 2 * sumX2 / QK;
        for (int j = 0; j < GROUPS; j++) {
            int g = at + 16 * j;
            for (int l = 0; l < 16; l++) {
                weight[l] = importance[column + 16 * j + l] * (float) Math.sqrt(sigma2 + x[g + l] * x[g + l]);
            }
            float sumW = 0;
            for (int l = 0; l < 16; l++) sumW += weight[l];
            groupWeights[j] = sumW;
            scales[j] = QuantMath.makeQxQuants(16, 4, x, g, levels, 16 * j, weight, 0);
        }
        float dBlock = QuantMath.makeQxQuants(GROUPS, 32, scales, 0, scaleLevels, 0, groupWeights, 0);
        for (int j = 0; j < GROUPS; j++) packScale(out, o, j, scaleLevels[j]);
        putHalf(out, o + 108, half(dBlock));
    }

    /** Group j's 6-bit scale level: low 4 bits in a nibble of bytes 0..7, top 2 bits in byte 8 + j % 4. */
    private static void packScale(byte[] out, int o, int j, int l) {
        if (j < 8) {
            out[o + SCALES + j] = (byte) (l & 0xF);
        } else {
            out[o + SCALES + j - 8] |= (byte) ((l & 0xF) << 4);
        }
        out[o + SCALES + 8 + j % 4] |= (byte) ((l >> 4) << 2 * (j / 4));
    }

    /** Both paths' end: each weight's level against the stored scales, the high bits to hmask, 2 bits to qs. */
    private static void requantizeAndPack(float[] x, int at, byte[] out, int o, int[] levels) {
        float d = halfValue((short) (out[o + 108] & 0xFF | out[o + 109] << 8));
        for (int j = 0; j < GROUPS; j++) {
            int low = j < 8 ? out[o + SCALES + j] & 0xF : (out[o + SCALES + j - 8] & 0xFF) >> 4;
            int sc = (low | ((out[o + SCALES + 8 + j % 4] & 0xFF) >> 2 * (j / 4) & 3) << 4) - 32;
            float dj = d * sc;
            if (dj == 0) continue; // keeps the search's levels, as llama.cpp does
            for (int i = 16 * j; i < 16 * j + 16; i++) {
                levels[i] = Math.max(-4, Math.min(3, nearestInt(x[at + i] / dj))) + 4;
            }
        }
        for (int k = 0; k < 32; k++) out[o + k] = 0;
        for (int j = 0; j < QK; j++) {
            if (levels[j] > 3) {
                out[o + j % 32] |= (byte) (1 << j / 32);
                levels[j] -= 4;
            }
        }
        for (int j = 0; j < QK; j += 128) {
            for (int l = 0; l < 32; l++) {
                out[o + 32 + j / 4 + l] = (byte) (levels[j + l] | levels[j + l + 32] << 2 | levels[j + l + 64] << 4
                        | levels[j + l + 96] << 6);
            }
        }
    }
}
