package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.U32;
import static fs.backend.cpu.QuantBlocks.U64;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;
import static fs.backend.cpu.QuantBlocks.scaleAndMin;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q5_K rows (layout in {@link fs.quant.ReferenceDequantizer}): Q4_K's nibbles plus a fifth bit per weight, bit g of
 * qh[l] for weight 32g + l. The qh chunk is shifted left by 4 once, so each group's bit is one shift right and a mask
 * away from its place (bit 4). Weights are {@code fma(q, d·scale, −dmin·min)}, as in {@link Q4KRows}.
 */
final class Q5KRows implements RowFormat {
    private static final int BLOCK_BYTES = 176;

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / 256; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at), dmin = half(w, at + 2);
            long first8 = w.get(U64, at + 4);
            int last4 = w.get(U32, at + 12);
            for (int run = 0; run < 4; run++) {
                int low = scaleAndMin(first8, last4, 2 * run), high = scaleAndMin(first8, last4, 2 * run + 1);
                FloatVector lowScale = FloatVector.broadcast(F, d * (low & 0xFF));
                FloatVector lowMin = FloatVector.broadcast(F, -(dmin * (low >> 8)));
                FloatVector highScale = FloatVector.broadcast(F, d * (high & 0xFF));
                FloatVector highMin = FloatVector.broadcast(F, -(dmin * (high >> 8)));
                int xRun = xOffset + 256 * b + 64 * run;
                for (int c = 0; c < 32; c += L) {
                    IntVector q = bytes(w, at + 48 + 32 * run + c);
                    IntVector h = bytes(w, at + 16 + c).lanewise(VectorOperators.LSHL, 4);
                    IntVector q0 = q.and(0xF).or(h.lanewise(VectorOperators.LSHR, 2 * run).and(0x10));
                    IntVector q1 = q.lanewise(VectorOperators.LSHR, 4).and(0xF)
                            .or(h.lanewise(VectorOperators.LSHR, 2 * run + 1).and(0x10));
                    acc0 = floats(q0).fma(lowScale, lowMin).fma(FloatVector.fromArray(F, x, xRun + c), acc0);
                    acc1 = floats(q1).fma(highScale, highMin).fma(FloatVector.fromArray(F, x, xRun + 32 + c), acc1);
                }
            }
        }
        return QuantBlocks.sum(acc0.add(acc1));
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int b = 0; b < k / 256; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at), dmin = half(w, at + 2);
            long first8 = w.get(U64, at + 4);
            int last4 = w.get(U32, at + 12);
            for (int group = 0; group < 8; group++) {
                int packed = scaleAndMin(first8, last4, group);
                FloatVector scale = FloatVector.broadcast(F, d * (packed & 0xFF));
                FloatVector min = FloatVector.broadcast(F, -(dmin * (packed >> 8)));
                for (int c = 0; c < 32; c += L) {
                    IntVector low = bytes(w, at + 48 + 32 * (group / 2) + c).lanewise(VectorOperators.LSHR, 4 * (group % 2));
                    IntVector h = bytes(w, at + 16 + c).lanewise(VectorOperators.LSHL, 4);
                    IntVector q = low.and(0xF).or(h.lanewise(VectorOperators.LSHR, group).and(0x10));
                    floats(q).fma(scale, min).intoArray(out, outOffset + 256 * b + 32 * group + c);
                }
            }
        }
    }
}
