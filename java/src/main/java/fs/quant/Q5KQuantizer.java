package fs.quant;

import static fs.quant.QuantMath.putHalf;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Q5_K, as ggml-quants.c's quantize_q5_K: Q4_K's algorithm ({@link Q4KQuantizer}) with levels 0..31, the reference
 * search's parameters of quantize_row_q5_K_ref (rmin −0.5, 16 steps of 0.1) without importance and
 * quantize_row_q5_K_impl with it. Layout: {@link ReferenceDequantizer}'s q5_k.
 */
final class Q5KQuantizer implements RowQuantizer {
    static final Q5KQuantizer INSTANCE = new Q5KQuantizer();

    private static final int QK = 256;
    private static final int BLOCK_BYTES = 176;
    private static final int NMAX = 31;

    private Q5KQuantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(DType.Q5_K, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / QK * BLOCK_BYTES];
        ScaleMinSearch s = new ScaleMinSearch();
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / QK; b++) {
                int at = r * columns + b * QK;
                int o = b * BLOCK_BYTES;
                if (importance == null) {
                    s.reference(weights, at, NMAX, -0.5f, 0.1f, 15, row, o + 4);
                } else {
                    s.weighted(weights, at, importance, b * QK, NMAX, true, row, o + 4);
                }
                putHalf(row, o, s.d);
                putHalf(row, o + 2, s.dmin);
                s.requantize(weights, at, NMAX, row, o + 4);
                pack(s.levels, row, o);
            }
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
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
