package fs.backend.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Dot-product tiles of {@code out = x · wᵀ}. Decode reads the weights in place (bf16 or f32 rows of the checkpoint's
 * memory); prefill first widens a block of weight rows to a float array and reuses it across the batch.
 *
 * <p>Every output is computed by one fixed chain of operations whatever tile computes it: one vector accumulator fed
 * by FMAs over the first {@code full} elements in steps of L, a fixed tree sum of its lanes, then scalar FMAs over
 * the rest. So a row of a batch gives exactly the floats it gives alone, and the thread that ran it does not matter.
 * (The Vector API's own {@code reduceLanes(ADD)} leaves the order open, so interpreted and compiled code, or two
 * JDK versions, need not agree.)
 *
 * <p>bf16 rows are read as ints holding two neighbours: {@code i << 16} is the even element as a float and
 * {@code i & 0xFFFF0000} the odd one, which is far cheaper than widening shorts (the Vector API does not compile
 * that conversion well). The input row (and a widened weight row) must then come split the same way: each chunk of
 * 2L elements laid out as its L even elements then its L odd ones ({@link #splitEvenOdd}); the tail past the last
 * full chunk stays in order. A plain f32 dot over split rows then performs exactly the bf16 kernel's operations.
 */
final class MatmulKernels {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    static final int L = F.length();
    private static final VectorSpecies<Float> HALF = FloatVector.SPECIES_256;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    /** Elements of one bf16 chunk: one int vector of weights. */
    static final int BF16_CHUNK = 2 * L;
    /** Input rows of a prefill tile. */
    static final int TILE_ROWS = 6;

    private static final int ODD_BF16 = 0xFFFF0000;
    private static final VectorShuffle<Float> EVENS = VectorShuffle.fromOp(F, j -> 2 * j);
    private static final VectorShuffle<Float> ODDS = VectorShuffle.fromOp(F, j -> 2 * j + 1);

    /** Floats of the lane scratch every tile needs: one vector per accumulator of the largest tile. */
    static final int LANES_SCRATCH = 4 * TILE_ROWS * L;

    private MatmulKernels() {}

    /** The elements a vector loop covers for a row of k: bf16 rows go in chunks of 2L, float rows in L. */
    static int vectorPart(int k, boolean bf16) {
        return k - k % (bf16 ? BF16_CHUNK : L);
    }

    /**
     * The sum of the L lanes at {@code lanes[from..]} in one fixed pairwise order (lane i plus lane i + L/2, and so on
     * down to one); may overwrite them. Kernels store their accumulators to an array and sum them here rather than
     * pass vectors to a method (a vector argument of a call C2 does not inline gets boxed, and the boxing spreads
     * into the hot loop: measured 8× slower) or reduce with shuffles (measured 2× slower for a 4×6 tile).
     */
    static float sumLanes(float[] lanes, int from) {
        if (L == 16) {
            // The first level as one 8-lane add of the two halves.
            FloatVector.fromArray(HALF, lanes, from).add(FloatVector.fromArray(HALF, lanes, from + 8))
                    .intoArray(lanes, from);
            float w0 = lanes[from] + lanes[from + 4], w1 = lanes[from + 1] + lanes[from + 5];
            float w2 = lanes[from + 2] + lanes[from + 6], w3 = lanes[from + 3] + lanes[from + 7];
            return (w0 + w2) + (w1 + w3);
        }
        for (int half = L / 2; half >= 1; half /= 2) {
            for (int i = from; i < from + half; i++) lanes[i] += lanes[i + half];
        }
        return lanes[from];
    }

    static float bf16ToFloat(short bits) {
        return Float.intBitsToFloat(bits << 16);
    }

    private static FloatVector even(IntVector pair) {
        return pair.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    private static FloatVector odd(IntVector pair) {
        return pair.and(ODD_BF16).reinterpretAsFloats();
    }

    // ---------------------------------------------------------------- layouts

    /** Copies a row of k floats from src (bytes) to dst, each full bf16 chunk split into evens then odds. */
    static void splitEvenOdd(MemorySegment src, long srcOffset, float[] dst, int dstOffset, int k) {
        int full = vectorPart(k, true);
        for (int c = 0; c < full; c += BF16_CHUNK) {
            FloatVector a = FloatVector.fromMemorySegment(F, src, srcOffset + 4L * c, LE);
            FloatVector b = FloatVector.fromMemorySegment(F, src, srcOffset + 4L * (c + L), LE);
            a.rearrange(EVENS, b).intoArray(dst, dstOffset + c);
            a.rearrange(ODDS, b).intoArray(dst, dstOffset + c + L);
        }
        MemorySegment.copy(src, FLOAT, srcOffset + 4L * full, dst, dstOffset + full, k - full);
    }

    /** Widens a bf16 row of k (bytes at w + offset) to floats in dst, split as {@link #splitEvenOdd} splits. */
    static void widenBf16Split(MemorySegment w, long offset, float[] dst, int dstOffset, int k) {
        int full = vectorPart(k, true);
        for (int c = 0; c < full; c += BF16_CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, offset + 2L * c, LE);
            even(p).intoArray(dst, dstOffset + c);
            odd(p).intoArray(dst, dstOffset + c + L);
        }
        for (int i = full; i < k; i++) dst[dstOffset + i] = bf16ToFloat(w.get(SHORT, offset + 2L * i));
    }

    /** Widens an f16 row of k to floats in dst, in order. */
    static void widenF16(MemorySegment w, long offset, float[] dst, int dstOffset, int k) {
        for (int i = 0; i < k; i++) dst[dstOffset + i] = Float.float16ToFloat(w.get(SHORT, offset + 2L * i));
    }

    // ---------------------------------------------------------------- bf16 weights in place, x split

    /** Adds the tail [from, k) of a row's dot product to the sum of its vector part. */
    private static float bf16Finish(float s, MemorySegment w, long wRow, float[] x, int xRow, int from, int k) {
        for (int i = from; i < k; i++) s = Math.fma(bf16ToFloat(w.get(SHORT, wRow + 2L * i)), x[xRow + i], s);
        return s;
    }

    /** One weight row (byte offset wRow) against one split input row; lanes is scratch of L floats or more. */
    static float bf16Dot(MemorySegment w, long wRow, float[] x, int xRow, int k, float[] lanes) {
        int full = vectorPart(k, true);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += BF16_CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, wRow + 2L * c, LE);
            acc = even(p).fma(FloatVector.fromArray(F, x, xRow + c), acc);
            acc = odd(p).fma(FloatVector.fromArray(F, x, xRow + c + L), acc);
        }
        acc.intoArray(lanes, 0);
        return bf16Finish(sumLanes(lanes, 0), w, wRow, x, xRow, full, k);
    }

    /**
     * Four weight rows (byte offsets {@code w0 + i·wStride}) against one split input row; the four outputs go to
     * {@code out + o0 + i·oStride}.
     */
    static void bf16Tile4x1(MemorySegment w, long w0, long wStride, float[] x, int xRow, int k,
                            MemorySegment out, long o0, long oStride, float[] lanes) {
        int full = vectorPart(k, true);
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += BF16_CHUNK) {
            long wo = 2L * c;
            FloatVector xe = FloatVector.fromArray(F, x, xRow + c);
            FloatVector xd = FloatVector.fromArray(F, x, xRow + c + L);
            IntVector p0 = IntVector.fromMemorySegment(I, w, w0 + wo, LE);
            IntVector p1 = IntVector.fromMemorySegment(I, w, w1 + wo, LE);
            IntVector p2 = IntVector.fromMemorySegment(I, w, w2 + wo, LE);
            IntVector p3 = IntVector.fromMemorySegment(I, w, w3 + wo, LE);
            a0 = odd(p0).fma(xd, even(p0).fma(xe, a0));
            a1 = odd(p1).fma(xd, even(p1).fma(xe, a1));
            a2 = odd(p2).fma(xd, even(p2).fma(xe, a2));
            a3 = odd(p3).fma(xd, even(p3).fma(xe, a3));
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        for (int i = 0; i < 4; i++) {
            out.set(FLOAT, o0 + i * oStride, bf16Finish(sumLanes(lanes, i * L), w, w0 + i * wStride, x, xRow, full, k));
        }
    }

    // ---------------------------------------------------------------- f32 weights in place

    private static float f32Finish(float s, MemorySegment w, long wRow, float[] x, int xRow, int from, int k) {
        for (int i = from; i < k; i++) s = Math.fma(w.get(FLOAT, wRow + 4L * i), x[xRow + i], s);
        return s;
    }

    static float f32Dot(MemorySegment w, long wRow, float[] x, int xRow, int k, float[] lanes) {
        int full = vectorPart(k, false);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += L) {
            acc = FloatVector.fromMemorySegment(F, w, wRow + 4L * c, LE).fma(FloatVector.fromArray(F, x, xRow + c), acc);
        }
        acc.intoArray(lanes, 0);
        return f32Finish(sumLanes(lanes, 0), w, wRow, x, xRow, full, k);
    }

    static void f32Tile4x1(MemorySegment w, long w0, long wStride, float[] x, int xRow, int k,
                           MemorySegment out, long o0, float[] lanes) {
        int full = vectorPart(k, false);
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += L) {
            long o = 4L * c;
            FloatVector xv = FloatVector.fromArray(F, x, xRow + c);
            a0 = FloatVector.fromMemorySegment(F, w, w0 + o, LE).fma(xv, a0);
            a1 = FloatVector.fromMemorySegment(F, w, w1 + o, LE).fma(xv, a1);
            a2 = FloatVector.fromMemorySegment(F, w, w2 + o, LE).fma(xv, a2);
            a3 = FloatVector.fromMemorySegment(F, w, w3 + o, LE).fma(xv, a3);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        for (int i = 0; i < 4; i++) {
            out.set(FLOAT, o0 + 4L * i, f32Finish(sumLanes(lanes, i * L), w, w0 + i * wStride, x, xRow, full, k));
        }
    }

    // ---------------------------------------------------------------- widened weights (float arrays)

    private static float finish(float s, float[] w, int wRow, float[] x, int xRow, int from, int k) {
        for (int i = from; i < k; i++) s = Math.fma(w[wRow + i], x[xRow + i], s);
        return s;
    }

    /** One widened weight row against one input row, vectors over the first {@code full} elements. */
    static float dot(float[] w, int wRow, float[] x, int xRow, int full, int k, float[] lanes) {
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += L) {
            acc = FloatVector.fromArray(F, w, wRow + c).fma(FloatVector.fromArray(F, x, xRow + c), acc);
        }
        acc.intoArray(lanes, 0);
        return finish(sumLanes(lanes, 0), w, wRow, x, xRow, full, k);
    }

    static void tile4x1(float[] w, int w0, int wStride, float[] x, int xRow, int full, int k,
                        MemorySegment out, long o0, float[] lanes) {
        int w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += L) {
            FloatVector xv = FloatVector.fromArray(F, x, xRow + c);
            a0 = FloatVector.fromArray(F, w, w0 + c).fma(xv, a0);
            a1 = FloatVector.fromArray(F, w, w1 + c).fma(xv, a1);
            a2 = FloatVector.fromArray(F, w, w2 + c).fma(xv, a2);
            a3 = FloatVector.fromArray(F, w, w3 + c).fma(xv, a3);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        for (int i = 0; i < 4; i++) out.set(FLOAT, o0 + 4L * i, finish(sumLanes(lanes, i * L), w, w0 + i * wStride, x, xRow, full, k));
    }

    /**
     * Four widened weight rows against {@link #TILE_ROWS} input rows, 24 accumulators in registers: each weight vector
     * is loaded once for six FMAs. Output for input row j and weight row i goes to {@code out + o0 + j·oStride + 4·i}.
     */
    static void tile4x6(float[] w, int w0, int wStride, float[] x, int x0, int xStride, int full, int k,
                        MemorySegment out, long o0, long oStride, float[] lanes) {
        int w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        int x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride, x4 = x3 + xStride, x5 = x4 + xStride;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00, a04 = a00, a05 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00, a14 = a00, a15 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00, a24 = a00, a25 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00, a34 = a00, a35 = a00;
        for (int c = 0; c < full; c += L) {
            FloatVector v0 = FloatVector.fromArray(F, w, w0 + c);
            FloatVector v1 = FloatVector.fromArray(F, w, w1 + c);
            FloatVector v2 = FloatVector.fromArray(F, w, w2 + c);
            FloatVector v3 = FloatVector.fromArray(F, w, w3 + c);
            FloatVector xv = FloatVector.fromArray(F, x, x0 + c);
            a00 = v0.fma(xv, a00);
            a10 = v1.fma(xv, a10);
            a20 = v2.fma(xv, a20);
            a30 = v3.fma(xv, a30);
            xv = FloatVector.fromArray(F, x, x1 + c);
            a01 = v0.fma(xv, a01);
            a11 = v1.fma(xv, a11);
            a21 = v2.fma(xv, a21);
            a31 = v3.fma(xv, a31);
            xv = FloatVector.fromArray(F, x, x2 + c);
            a02 = v0.fma(xv, a02);
            a12 = v1.fma(xv, a12);
            a22 = v2.fma(xv, a22);
            a32 = v3.fma(xv, a32);
            xv = FloatVector.fromArray(F, x, x3 + c);
            a03 = v0.fma(xv, a03);
            a13 = v1.fma(xv, a13);
            a23 = v2.fma(xv, a23);
            a33 = v3.fma(xv, a33);
            xv = FloatVector.fromArray(F, x, x4 + c);
            a04 = v0.fma(xv, a04);
            a14 = v1.fma(xv, a14);
            a24 = v2.fma(xv, a24);
            a34 = v3.fma(xv, a34);
            xv = FloatVector.fromArray(F, x, x5 + c);
            a05 = v0.fma(xv, a05);
            a15 = v1.fma(xv, a15);
            a25 = v2.fma(xv, a25);
            a35 = v3.fma(xv, a35);
        }
        // Accumulator of input row j, weight row i at lanes[(4j + i)·L].
        a00.intoArray(lanes, 0);
        a10.intoArray(lanes, L);
        a20.intoArray(lanes, 2 * L);
        a30.intoArray(lanes, 3 * L);
        a01.intoArray(lanes, 4 * L);
        a11.intoArray(lanes, 5 * L);
        a21.intoArray(lanes, 6 * L);
        a31.intoArray(lanes, 7 * L);
        a02.intoArray(lanes, 8 * L);
        a12.intoArray(lanes, 9 * L);
        a22.intoArray(lanes, 10 * L);
        a32.intoArray(lanes, 11 * L);
        a03.intoArray(lanes, 12 * L);
        a13.intoArray(lanes, 13 * L);
        a23.intoArray(lanes, 14 * L);
        a33.intoArray(lanes, 15 * L);
        a04.intoArray(lanes, 16 * L);
        a14.intoArray(lanes, 17 * L);
        a24.intoArray(lanes, 18 * L);
        a34.intoArray(lanes, 19 * L);
        a05.intoArray(lanes, 20 * L);
        a15.intoArray(lanes, 21 * L);
        a25.intoArray(lanes, 22 * L);
        a35.intoArray(lanes, 23 * L);
        for (int j = 0; j < TILE_ROWS; j++) {
            for (int i = 0; i < 4; i++) {
                out.set(FLOAT, o0 + j * oStride + 4L * i,
                        finish(sumLanes(lanes, (4 * j + i) * L), w, w0 + i * wStride, x, x0 + j * xStride, full, k));
            }
        }
    }
}
