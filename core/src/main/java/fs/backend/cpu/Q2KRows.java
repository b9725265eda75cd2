package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;
import static fs.backend.cpu.QuantBlocks.u8;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q2_K rows (layout in {@link fs.format.ReferenceDequantizer}): each half of a block is 32 qs bytes holding four runs
 * of 32 weights (s = 0..3) in their crumbs, so one chunk of qs yields a chunk of each run. A weight is
 * {@code fma(q, d·scale, −dmin·min)}, which rounds once, as the reference's {@code (d·scale)·q − dmin·min} does after
 * its exact product.
 */
final class Q2KRows implements RowFormat {
    private static final int BLOCK = DType.Q2_K.blockElements();
    private static final int BLOCK_BYTES = DType.Q2_K.blockBytes();

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        float[] scales = new float[32];
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            scalesAndMins(w, at, scales);
            for (int h = 0; h < 2; h++) {
                int xHalf = xOffset + BLOCK * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    IntVector q = bytes(w, at + 16 + 32 * h + l);
                    int g = 8 * h + l / 16;
                    for (int s = 0; s < 4; s += 2) {
                        FloatVector w0 = floats(q.lanewise(VectorOperators.LSHR, 2 * s).and(3))
                                .fma(scales[g + 2 * s], scales[16 + g + 2 * s]);
                        FloatVector w1 = floats(q.lanewise(VectorOperators.LSHR, 2 * s + 2).and(3))
                                .fma(scales[g + 2 * s + 2], scales[16 + g + 2 * s + 2]);
                        acc0 = w0.fma(FloatVector.fromArray(F, x, xHalf + 32 * s + l), acc0);
                        acc1 = w1.fma(FloatVector.fromArray(F, x, xHalf + 32 * s + 32 + l), acc1);
                    }
                }
            }
        }
        acc0.add(acc1).intoArray(lanes, 0);
        return MatmulKernels.sumLanes(lanes, 0);
    }

    /**
     * d·scale of the block's 16 groups into {@code out[0..16)} and −dmin·min into {@code out[16..32)}, in vectors:
     * one scalar decode per group cost more than the group's 16 weights.
     */
    private static void scalesAndMins(MemorySegment w, long at, float[] out) {
        float d = half(w, at + 80), dmin = half(w, at + 82);
        for (int g = 0; g < 16; g += L) {
            IntVector packed = bytes(w, at + g);
            floats(packed.and(0xF)).mul(d).intoArray(out, g);
            floats(packed.lanewise(VectorOperators.LSHR, 4).and(0xF)).mul(-dmin).intoArray(out, 16 + g);
        }
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at + 80), dmin = half(w, at + 82);
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += L) {
                    IntVector q = bytes(w, at + 16 + 32 * h + l);
                    for (int s = 0; s < 4; s++) {
                        int packed = u8(w, at + 8 * h + 2 * s + l / 16);
                        floats(q.lanewise(VectorOperators.LSHR, 2 * s).and(3))
                                .fma(d * (packed & 0xF), -(dmin * (packed >> 4)))
                                .intoArray(out, outOffset + BLOCK * b + 128 * h + 32 * s + l);
                    }
                }
            }
        }
    }
}
