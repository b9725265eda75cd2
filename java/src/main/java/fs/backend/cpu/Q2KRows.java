package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;
import static fs.backend.cpu.QuantBlocks.u8;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q2_K rows (layout in {@link fs.quant.ReferenceDequantizer}): each half of a block is 32 qs bytes holding four runs
 * of 32 weights (s = 0..3) in their crumbs, so one chunk of qs yields a chunk of each run. A weight is
 * {@code fma(q, d·scale, −dmin·min)}, which rounds once, as the reference's {@code (d·scale)·q − dmin·min} does after
 * its exact product.
 */
final class Q2KRows implements RowFormat {
    private static final int BLOCK_BYTES = 84;

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / 256; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at + 80), dmin = half(w, at + 82);
            for (int h = 0; h < 2; h++) {
                int xHalf = xOffset + 256 * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    IntVector q = bytes(w, at + 16 + 32 * h + l);
                    int group = 8 * h + l / 16;
                    for (int s = 0; s < 4; s += 2) {
                        FloatVector w0 = weights(w, at, q, s, group + 2 * s, d, dmin);
                        FloatVector w1 = weights(w, at, q, s + 1, group + 2 * s + 2, d, dmin);
                        acc0 = w0.fma(FloatVector.fromArray(F, x, xHalf + 32 * s + l), acc0);
                        acc1 = w1.fma(FloatVector.fromArray(F, x, xHalf + 32 * s + 32 + l), acc1);
                    }
                }
            }
        }
        return QuantBlocks.sum(acc0.add(acc1));
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int b = 0; b < k / 256; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at + 80), dmin = half(w, at + 82);
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += L) {
                    IntVector q = bytes(w, at + 16 + 32 * h + l);
                    for (int s = 0; s < 4; s++) {
                        weights(w, at, q, s, 8 * h + 2 * s + l / 16, d, dmin)
                                .intoArray(out, outOffset + 256 * b + 128 * h + 32 * s + l);
                    }
                }
            }
        }
    }

    /** Crumb {@code s} of the qs chunk q, in group {@code group}, whose scale byte holds the scale low, min high. */
    private static FloatVector weights(MemorySegment w, long at, IntVector q, int s, int group, float d, float dmin) {
        int packed = u8(w, at + group);
        IntVector crumbs = q.lanewise(VectorOperators.LSHR, 2 * s).and(3);
        return floats(crumbs).fma(d * (packed & 0xF), -(dmin * (packed >> 4)));
    }
}
