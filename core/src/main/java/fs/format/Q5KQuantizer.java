package fs.format;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;

/**
 * Q5_K, as ggml-quants.c's quantize_q5_K: Q4_K's algorithm ({@link Q4KQuantizer}) with levels 0..31, the reference
 * search's parameters of quantize_row_q5_K_ref (rmin −0.5, 16 steps of 0.1) without importance and
 * quantize_row_q5_K_impl with it. Layout: {@link ReferenceDequantizer}'s q5_k.
 */
final class Q5KQuantizer implements RowQuantizer {
    static final Q5KQuantizer INSTANCE = new Q5KQuantizer();

    private static final int NMAX = 31;

    private Q5KQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        ScaleMinSearch.quantizeRows(DType.Q5_K, NMAX, -0.5f, 15, true, Q5KQuantizer::pack, weights, rows,
                columns, importance, out, outOffset);
    }

    /** The low nibbles as Q4_K packs them (from byte 48), the fifth bits of group g in bit g of qh[l] (byte 16). */
    private static void pack(int[] levels, byte[] out, int o) {
        for (int l = 0; l < 32; l++) out[o + 16 + l] = 0;
        int m1 = 1;
        int m2 = 2;
        for (int n = 0; n < 256; n += 64) {
            for (int j = 0; j < 32; j++) {
                int l1 = levels[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    out[o + 16 + j] |= (byte) m1;
                }
                int l2 = levels[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    out[o + 16 + j] |= (byte) m2;
                }
                out[o + 48 + n / 2 + j] = (byte) (l1 | l2 << 4);
            }
            m1 <<= 2;
            m2 <<= 2;
        }
    }
}
