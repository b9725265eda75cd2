package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K rows (layout in {@link fs.quant.ReferenceDequantizer}): each half of a block is 64 ql bytes and 32 qh bytes
 * holding 128 weights in four runs of 32 (c = 0..3). One chunk position l of the half reads two ql chunks and one qh
 * chunk and yields a chunk of each of the four runs: run c's low nibble from ql chunk c & 1 (its high nibble for
 * c ≥ 2), its top two bits from bits 2c..2c+1 of qh, moved to bits 4..5. A weight is {@code (q − 32)·(d·scale)},
 * an exact product.
 */
final class Q6KRows implements RowFormat {
    private static final int BLOCK_BYTES = 210;

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / 256; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at + 208);
            for (int h = 0; h < 2; h++) {
                int xHalf = xOffset + 256 * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    IntVector a = bytes(w, at + 64 * h + l), c = bytes(w, at + 64 * h + 32 + l);
                    IntVector hb = bytes(w, at + 128 + 32 * h + l);
                    int group = 8 * h + l / 16;
                    FloatVector w0 = weights(a.and(0xF), hb.lanewise(VectorOperators.LSHL, 4), scale(w, at, d, group));
                    FloatVector w1 = weights(c.and(0xF), hb.lanewise(VectorOperators.LSHL, 2), scale(w, at, d, group + 2));
                    FloatVector w2 = weights(a.lanewise(VectorOperators.LSHR, 4).and(0xF), hb, scale(w, at, d, group + 4));
                    FloatVector w3 = weights(c.lanewise(VectorOperators.LSHR, 4).and(0xF),
                            hb.lanewise(VectorOperators.LSHR, 2), scale(w, at, d, group + 6));
                    acc0 = w0.fma(FloatVector.fromArray(F, x, xHalf + l), acc0);
                    acc1 = w1.fma(FloatVector.fromArray(F, x, xHalf + 32 + l), acc1);
                    acc0 = w2.fma(FloatVector.fromArray(F, x, xHalf + 64 + l), acc0);
                    acc1 = w3.fma(FloatVector.fromArray(F, x, xHalf + 96 + l), acc1);
                }
            }
        }
        return QuantBlocks.sum(acc0.add(acc1));
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int b = 0; b < k / 256; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at + 208);
            for (int h = 0; h < 2; h++) {
                int o = outOffset + 256 * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    IntVector a = bytes(w, at + 64 * h + l), c = bytes(w, at + 64 * h + 32 + l);
                    IntVector hb = bytes(w, at + 128 + 32 * h + l);
                    int group = 8 * h + l / 16;
                    weights(a.and(0xF), hb.lanewise(VectorOperators.LSHL, 4), scale(w, at, d, group))
                            .intoArray(out, o + l);
                    weights(c.and(0xF), hb.lanewise(VectorOperators.LSHL, 2), scale(w, at, d, group + 2))
                            .intoArray(out, o + 32 + l);
                    weights(a.lanewise(VectorOperators.LSHR, 4).and(0xF), hb, scale(w, at, d, group + 4))
                            .intoArray(out, o + 64 + l);
                    weights(c.lanewise(VectorOperators.LSHR, 4).and(0xF), hb.lanewise(VectorOperators.LSHR, 2),
                            scale(w, at, d, group + 6)).intoArray(out, o + 96 + l);
                }
            }
        }
    }

    /** The weights of low nibbles {@code low} and top bits at bits 4..5 of {@code high} (other bits ignored). */
    private static FloatVector weights(IntVector low, IntVector high, float scale) {
        return floats(low.or(high.and(0x30)).sub(32)).mul(scale);
    }

    private static float scale(MemorySegment w, long at, float d, int group) {
        return d * w.get(ValueLayout.JAVA_BYTE, at + 192 + group);
    }
}
