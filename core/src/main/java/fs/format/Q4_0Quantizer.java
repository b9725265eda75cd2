package fs.format;

import static fs.format.QuantMath.half;
import static fs.format.QuantMath.putHalf;
import static fs.format.QuantMath.truncate;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Q4_0, as ggml-quants.c's quantize_q4_0: without importance quantize_row_q4_0_ref (d = the signed largest weight
 * over −8, q = x / d + 8.5 truncated), with it quantize_row_q4_0_impl (make_qx_quants weighted by importance ×
 * √(σ² + x²), σ² the row's mean square).
 */
final class Q4_0Quantizer implements RowQuantizer {
    static final Q4_0Quantizer INSTANCE = new Q4_0Quantizer();

    private static final int BLOCK = DType.Q4_0.blockElements();
    private static final int BLOCK_BYTES = DType.Q4_0.blockBytes();

    private Q4_0Quantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(DType.Q4_0, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / BLOCK * BLOCK_BYTES];
        float[] weight = new float[BLOCK];
        int[] levels = new int[BLOCK];
        for (int r = 0; r < rows; r++) {
            int at = r * columns;
            if (importance == null) {
                for (int b = 0; b < columns / BLOCK; b++) reference(weights, at + b * BLOCK, row, b * BLOCK_BYTES);
            } else {
                weighted(weights, at, columns, importance, row, weight, levels);
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }

    /** quantize_row_q4_0_ref, one block. */
    private static void reference(float[] x, int at, byte[] out, int o) {
        float amax = 0;
        float max = 0;
        for (int j = 0; j < BLOCK; j++) {
            float v = x[at + j];
            if (amax < Math.abs(v)) {
                amax = Math.abs(v);
                max = v;
            }
        }
        float d = max / -8;
        float id = d != 0 ? 1f / d : 0f;
        putHalf(out, o, half(d));
        for (int j = 0; j < BLOCK / 2; j++) {
            // MIN(15, (int8_t)(x0 + 8.5f)) into a uint8_t: the sum lies in [0, 17) unless x0 is infinite
            int q0 = Math.min(15, (byte) truncate(x[at + j] * id + 8.5f)) & 0xFF;
            int q1 = Math.min(15, (byte) truncate(x[at + BLOCK / 2 + j] * id + 8.5f)) & 0xFF;
            out[o + 2 + j] = (byte) (q0 | q1 << 4);
        }
    }

    /** quantize_row_q4_0_impl, one row. */
    private static void weighted(float[] x, int at, int columns, float[] importance, byte[] out, float[] weight,
            int[] levels) {
        float sumX2 = 0;
        for (int j = 0; j < columns; j++) sumX2 += x[at + j] * x[at + j];
        float sigma2 = sumX2 / columns;
        for (int b = 0; b < columns / BLOCK; b++) {
            int xb = at + b * BLOCK;
            for (int j = 0; j < BLOCK; j++) {
                float v = x[xb + j];
                weight[j] = importance[b * BLOCK + j] * (float) Math.sqrt(sigma2 + v * v);
            }
            float d = QuantMath.makeQxQuants(BLOCK, 8, x, xb, levels, 0, weight, 0);
            int o = b * BLOCK_BYTES;
            putHalf(out, o, half(d));
            for (int j = 0; j < BLOCK / 2; j++) out[o + 2 + j] = (byte) (levels[j] | levels[j + 16] << 4);
        }
    }
}
