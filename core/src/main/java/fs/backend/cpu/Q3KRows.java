package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.U32;
import static fs.backend.cpu.QuantBlocks.U64;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q3_K rows (layout in {@link fs.format.ReferenceDequantizer}): each half of a block is 32 qs bytes holding four runs
 * of 32 weights (s = 0..3) in their crumbs, and the 32 hmask bytes hold each weight's third bit, bit 4·half + s. A
 * chunk of qs and of hmask (shifted left by 2 once, so a run's bit lands on bit 2 with one shift right) yields a chunk
 * of each of the four runs: q = (low | bit << 2) − 4, from −4 to 3. The 16 signed 6-bit group scales are unpacked
 * once per block. A weight is {@code (d·scale)·q}, an exact product.
 */
final class Q3KRows implements RowFormat {
    private static final int BLOCK = DType.Q3_K.blockElements();
    private static final int BLOCK_BYTES = DType.Q3_K.blockBytes();
    private static final long NIBBLES = 0x0F0F0F0F0F0F0F0FL;
    private static final long CRUMBS = 0x03030303L;

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        float[] scales = new float[16];
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            scales(w, at, scales);
            for (int h = 0; h < 2; h++) {
                int xHalf = xOffset + BLOCK * b + 128 * h;
                for (int l = 0; l < 32; l += L) {
                    IntVector qs = bytes(w, at + 32 + 32 * h + l);
                    IntVector hm = bytes(w, at + l).lanewise(VectorOperators.LSHL, 2);
                    int group = 8 * h + l / 16;
                    for (int s = 0; s < 4; s += 2) {
                        FloatVector w0 = weights(qs, hm, 4 * h + s, scales[group + 2 * s]);
                        FloatVector w1 = weights(qs, hm, 4 * h + s + 1, scales[group + 2 * s + 2]);
                        acc0 = w0.fma(FloatVector.fromArray(F, x, xHalf + 32 * s + l), acc0);
                        acc1 = w1.fma(FloatVector.fromArray(F, x, xHalf + 32 * s + 32 + l), acc1);
                    }
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
            scales(w, at, scales);
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 32; l += L) {
                    IntVector qs = bytes(w, at + 32 + 32 * h + l);
                    IntVector hm = bytes(w, at + l).lanewise(VectorOperators.LSHL, 2);
                    for (int s = 0; s < 4; s++) {
                        weights(qs, hm, 4 * h + s, scales[8 * h + 2 * s + l / 16])
                                .intoArray(out, outOffset + BLOCK * b + 128 * h + 32 * s + l);
                    }
                }
            }
        }
    }

    /**
     * Run {@code run} (0..7: 4·half + s) of a chunk: crumb {@code run % 4} of qs, bit {@code run} of the hmask chunk
     * hm (shifted left by 2).
     */
    private static FloatVector weights(IntVector qs, IntVector hm, int run, float scale) {
        IntVector low = qs.lanewise(VectorOperators.LSHR, 2 * (run % 4)).and(3);
        IntVector high = hm.lanewise(VectorOperators.LSHR, run).and(4);
        return floats(low.or(high).sub(4)).mul(scale);
    }

    /**
     * d·(scale − 32) of the 16 groups of the block at {@code at}. The 6-bit scales are put together 8 at a time in a
     * long (each byte's low nibble and top two bits come from two other bytes) and converted in vectors: a scalar
     * decode per group cost more than the block's vector work.
     */
    private static void scales(MemorySegment w, long at, float[] scales) {
        float d = half(w, at + 108);
        long lows = w.get(U64, at + 96);
        long highs = Integer.toUnsignedLong(w.get(U32, at + 104));
        long first = lows & NIBBLES | (highs & CRUMBS | (highs >>> 2 & CRUMBS) << 32) << 4;
        long second = lows >>> 4 & NIBBLES | (highs >>> 4 & CRUMBS | (highs >>> 6 & CRUMBS) << 32) << 4;
        QuantBlocks.eightBytes(first, 32, d, scales, 0);
        QuantBlocks.eightBytes(second, 32, d, scales, 8);
    }
}
