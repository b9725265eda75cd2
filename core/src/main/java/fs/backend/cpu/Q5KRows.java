package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q5_K rows (layout in {@link fs.format.ReferenceDequantizer}): Q4_K's nibbles plus a fifth bit per weight, bit g of
 * qh[l] for weight 32g + l. The qh chunk is shifted left by 4 once, so each group's bit is one shift right and a mask
 * away from its place (bit 4). Weights are {@code fma(q, d·scale, −dmin·min)}, as in {@link Q4KRows}. The dot
 * product goes group by group, not two groups per chunk of bytes as Q4_K's does: with both groups' decoding in one
 * step, the method grew too large for C2 to inline its helpers and it boxed their vectors (37 KB per row).
 */
final class Q5KRows implements RowFormat {
    private static final int BLOCK = DType.Q5_K.blockElements();
    private static final int BLOCK_BYTES = DType.Q5_K.blockBytes();

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        float[] scales = new float[16];
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            QuantBlocks.scalesAndMins(w, at + 4, half(w, at), half(w, at + 2), scales);
            for (int group = 0; group < 8; group++) {
                FloatVector scale = FloatVector.broadcast(F, scales[group]);
                FloatVector min = FloatVector.broadcast(F, scales[8 + group]);
                int xGroup = xOffset + BLOCK * b + 32 * group;
                for (int c = 0; c < 32; c += L) {
                    IntVector low = bytes(w, at + 48 + 32 * (group / 2) + c).lanewise(VectorOperators.LSHR, 4 * (group % 2));
                    IntVector h = bytes(w, at + 16 + c).lanewise(VectorOperators.LSHL, 4);
                    IntVector q = low.and(0xF).or(h.lanewise(VectorOperators.LSHR, group).and(0x10));
                    FloatVector weights = floats(q).fma(scale, min);
                    // Two chains of FMAs, by group, so that one waits less on the other's latency.
                    if (group % 2 == 0) acc0 = weights.fma(FloatVector.fromArray(F, x, xGroup + c), acc0);
                    else acc1 = weights.fma(FloatVector.fromArray(F, x, xGroup + c), acc1);
                }
            }
        }
        acc0.add(acc1).intoArray(lanes, 0);
        return MatmulKernels.sumLanes(lanes, 0);
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        float[] scales = new float[16];
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            QuantBlocks.scalesAndMins(w, at + 4, half(w, at), half(w, at + 2), scales);
            for (int group = 0; group < 8; group++) {
                FloatVector scale = FloatVector.broadcast(F, scales[group]);
                FloatVector min = FloatVector.broadcast(F, scales[8 + group]);
                for (int c = 0; c < 32; c += L) {
                    IntVector low = bytes(w, at + 48 + 32 * (group / 2) + c).lanewise(VectorOperators.LSHR, 4 * (group % 2));
                    IntVector h = bytes(w, at + 16 + c).lanewise(VectorOperators.LSHL, 4);
                    IntVector q = low.and(0xF).or(h.lanewise(VectorOperators.LSHR, group).and(0x10));
                    floats(q).fma(scale, min).intoArray(out, outOffset + BLOCK * b + 32 * group + c);
                }
            }
        }
    }
}
