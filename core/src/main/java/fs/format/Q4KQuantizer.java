package fs.format;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_K, as ggml-quants.c's quantize_q4_K: without importance quantize_row_q4_K_ref (make_qkx2_quants per group of
 * 32 weighted by the group's rms + |x|, the 6-bit scales and mins scaled to the block's largest), with it
 * quantize_row_q4_K_impl (make_qkx3_quants weighted by importance × √(σ² + x²), the scales and mins themselves
 * fitted by make_qp_quants). Both end by requantizing every weight against the stored f16 and 6-bit values.
 * Layout: {@link ReferenceDequantizer}'s q4_k.
 */
final class Q4KQuantizer implements RowQuantizer {
    static final Q4KQuantizer INSTANCE = new Q4KQuantizer();

    private static final int QK = DType.Q4_K.blockElements();
    private static final int NMAX = 15;

    private Q4KQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        ScaleMinSearch.quantizeRows(DType.Q4_K, NMAX, -1f, 20, false, Q4KQuantizer::pack, weights, rows,
                columns, importance, out, outOffset);
    }

    /** Two groups of 32 to a run of 32 bytes, the first in the low nibbles (from byte 16). */
    private static void pack(int[] levels, byte[] out, int o) {
        for (int j = 0; j < QK; j += 64) {
            for (int l = 0; l < 32; l++) {
                out[o + 16 + j / 2 + l] = (byte) (levels[j + l] | levels[j + l + 32] << 4);
            }
        }
    }
}
