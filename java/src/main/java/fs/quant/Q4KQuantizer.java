package fs.quant;

import static fs.quant.QuantMath.putHalf;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Q4_K, as ggml-quants.c's quantize_q4_K: without importance quantize_row_q4_K_ref (make_qkx2_quants per group of
 * 32 weighted by the group's rms + |x|, the 6-bit scales and mins scaled to the block's largest), with it
 * quantize_row_q4_K_impl (make_qkx3_quants weighted by importance × √(σ² + x²), the scales and mins themselves
 * fitted by make_qp_quants). Both end by requantizing every weight against the stored f16 and 6-bit values.
 * Layout: {@link ReferenceDequantizer}'s q4_k.
 */
final class Q4KQuantizer implements RowQuantizer {
    static final Q4KQuantizer INSTANCE = new Q4KQuantizer();

    private static final int QK = 256;
    private static final int BLOCK_BYTES = 144;
    private static final int NMAX = 15;

    private Q4KQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(DType.Q4_K, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / QK * BLOCK_BYTES];
        ScaleMinSearch s = new ScaleMinSearch();
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / QK; b++) {
                int at = r * columns + b * QK;
                int o = b * BLOCK_BYTES;
                if (importance == null) {
                    s.reference(weights, at, NMAX, -1f, 0.1f, 20, row, o + 4);
                } else {
                    s.weighted(weights, at, importance, b * QK, NMAX, false, row, o + 4);
                }
                putHalf(row, o, s.d);
                putHalf(row, o + 2, s.dmin);
                s.requantize(weights, at, NMAX, row, o + 4);
                for (int j = 0; j < QK; j += 64) {
                    for (int l = 0; l < 32; l++) {
                        row[o + 16 + j / 2 + l] = (byte) (s.levels[j + l] | s.levels[j + l + 32] << 4);
                    }
                }
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }
}
