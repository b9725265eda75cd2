package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.U64;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K rows (layout in {@link fs.format.ReferenceDequantizer}): each half of a block is 64 ql bytes and 32 qh bytes
 * holding 128 weights in four runs of 32 (c = 0..3). One chunk position l of the half reads two ql chunks and one qh
 * chunk and yields a chunk of each of the four runs: run c's low nibble from ql chunk c & 1 (its high nibble for
 * c ≥ 2), its top two bits from bits 2c..2c+1 of qh, moved to bits 4..5. A weight is {@code (q − 32)·(d·scale)},
 * an exact product. The dot product decodes two runs per step of a loop over the pairs rather than all four
 * written out: the four written out made a method too large for C2 to inline its helpers into, and it boxed their
 * vectors (14 KB allocated per row, 3× slower).
 */
final class Q6KRows implements RowFormat {
    private static final int BLOCK = DType.Q6_K.blockElements();
    private static final int BLOCK_BYTES = DType.Q6_K.blockBytes();

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at + 208);
            for (int h = 0; h < 2; h++) {
                long scales = w.get(U64, at + 192 + 8 * h); // the signed scales of groups 8h..8h+7
                int xHalf = xOffset + BLOCK * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    IntVector a = bytes(w, at + 64 * h + l), c = bytes(w, at + 64 * h + 32 + l);
                    IntVector hb = bytes(w, at + 128 + 32 * h + l);
                    for (int pair = 0; pair < 2; pair++) { // runs 2·pair (from a) and 2·pair + 1 (from c)
                        int shift = 4 * pair, g = l / 16 + 4 * pair;
                        IntVector high = hb.lanewise(VectorOperators.LSHR, shift);
                        IntVector q0 = a.lanewise(VectorOperators.LSHR, shift).and(0xF)
                                .or(high.lanewise(VectorOperators.LSHL, 4).and(0x30));
                        IntVector q1 = c.lanewise(VectorOperators.LSHR, shift).and(0xF)
                                .or(high.lanewise(VectorOperators.LSHL, 2).and(0x30));
                        FloatVector w0 = floats(q0.sub(32)).mul(d * (byte) (scales >>> 8 * g));
                        FloatVector w1 = floats(q1.sub(32)).mul(d * (byte) (scales >>> 8 * (g + 2)));
                        acc0 = w0.fma(FloatVector.fromArray(F, x, xHalf + 64 * pair + l), acc0);
                        acc1 = w1.fma(FloatVector.fromArray(F, x, xHalf + 64 * pair + 32 + l), acc1);
                    }
                }
            }
        }
        acc0.add(acc1).intoArray(lanes, 0);
        return MatmulKernels.sumLanes(lanes, 0);
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at + 208);
            for (int h = 0; h < 2; h++) {
                int o = outOffset + BLOCK * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    IntVector a = bytes(w, at + 64 * h + l), c = bytes(w, at + 64 * h + 32 + l);
                    IntVector hb = bytes(w, at + 128 + 32 * h + l);
                    for (int run = 0; run < 4; run++) {
                        IntVector low = (run % 2 == 0 ? a : c).lanewise(VectorOperators.LSHR, 4 * (run / 2)).and(0xF);
                        IntVector high = hb.lanewise(VectorOperators.LSHL, 4).lanewise(VectorOperators.LSHR, 2 * run);
                        float scale = d * w.get(ValueLayout.JAVA_BYTE, at + 192 + 8 * h + 2 * run + l / 16);
                        floats(low.or(high.and(0x30)).sub(32)).mul(scale).intoArray(out, o + 32 * run + l);
                    }
                }
            }
        }
    }
}
