package fs.format;

import static fs.format.QuantMath.GROUP_MAX_EPS;
import static fs.format.QuantMath.half;
import static fs.format.QuantMath.halfValue;
import static fs.format.QuantMath.nearestInt;
import static fs.format.QuantMath.putHalf;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Q6_K, as ggml-quants.c's quantize_q6_K: quantize_row_q6_K_ref without importance, quantize_row_q6_K_impl with it.
 * The two differ only in the weights of each 16-weight group's make_qx_quants search (x² against the importance
 * itself), so one method does both. Layout: {@link ReferenceDequantizer}'s q6_k.
 */
final class Q6KQuantizer implements RowQuantizer {
    static final Q6KQuantizer INSTANCE = new Q6KQuantizer();

    private static final int QK = DType.Q6_K.blockElements();
    private static final int BLOCK_BYTES = DType.Q6_K.blockBytes();

    private Q6KQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(DType.Q6_K, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / QK * BLOCK_BYTES];
        int[] levels = new int[QK];
        float[] scales = new float[QK / 16];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / QK; b++) {
                block(weights, r * columns + b * QK, importance, b * QK, row, b * BLOCK_BYTES, levels, scales);
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }

    private static void block(float[] x, int at, float[] importance, int column, byte[] out, int o, int[] levels,
            float[] scales) {
        float maxScale = 0;
        float maxAbsScale = 0;
        for (int g = 0; g < QK / 16; g++) {
            float scale = QuantMath.makeQxQuants(16, 32, x, at + 16 * g, levels, 16 * g, importance, column + 16 * g);
            scales[g] = scale;
            if (Math.abs(scale) > maxAbsScale) {
                maxAbsScale = Math.abs(scale);
                maxScale = scale;
            }
        }
        if (maxAbsScale < GROUP_MAX_EPS) {
            Arrays.fill(out, o, o + BLOCK_BYTES, (byte) 0);
            return;
        }
        float iscale = -128f / maxScale;
        short d = half(1 / iscale);
        putHalf(out, o + 208, d);
        for (int g = 0; g < QK / 16; g++) out[o + 192 + g] = (byte) Math.min(127, nearestInt(iscale * scales[g]));
        for (int g = 0; g < QK / 16; g++) {
            float dg = halfValue(d) * out[o + 192 + g];
            if (dg == 0) continue; // keeps the search's levels, as llama.cpp does
            for (int i = 16 * g; i < 16 * g + 16; i++) {
                levels[i] = Math.max(-32, Math.min(31, nearestInt(x[at + i] / dg))) + 32;
            }
        }
        for (int h = 0; h < 2; h++) {
            int j = 128 * h;
            for (int l = 0; l < 32; l++) {
                int q1 = levels[j + l];
                int q2 = levels[j + l + 32];
                int q3 = levels[j + l + 64];
                int q4 = levels[j + l + 96];
                out[o + 64 * h + l] = (byte) (q1 & 0xF | (q3 & 0xF) << 4);
                out[o + 64 * h + l + 32] = (byte) (q2 & 0xF | (q4 & 0xF) << 4);
                out[o + 128 + 32 * h + l] = (byte) (q1 >> 4 | (q2 >> 4) << 2 | (q3 >> 4) << 4 | (q4 >> 4) << 6);
            }
        }
    }
}
