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
 * (The Vector API's own {@code reduceLanes(ADD)} leaves the order open, and the interpreter and C2 do differ.)
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
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    /** Elements of one bf16 chunk: one int vector of weights. */
    static final int BF16_CHUNK = 2 * L;
    /** Input rows of a prefill tile. */
    static final int TILE_ROWS = 6;

    private static final int ODD_BF16 = 0xFFFF0000;
    private static final VectorShuffle<Float> SWAP_8 = F.shuffleFromOp(i -> (i ^ 8) & (L - 1));
    private static final VectorShuffle<Float> SWAP_4 = F.shuffleFromOp(i -> (i ^ 4) & (L - 1));
    private static final VectorShuffle<Float> SWAP_2 = F.shuffleFromOp(i -> (i ^ 2) & (L - 1));
    private static final VectorShuffle<Float> SWAP_1 = F.shuffleFromOp(i -> (i ^ 1) & (L - 1));
    private static final VectorShuffle<Float> EVENS = VectorShuffle.fromOp(F, j -> 2 * j);
    private static final VectorShuffle<Float> ODDS = VectorShuffle.fromOp(F, j -> 2 * j + 1);

    static {
        if (L > 16) throw new IllegalStateException("vector width " + L + " floats is not supported");
    }

    private MatmulKernels() {}

    /** The elements a vector loop covers for a row of k: bf16 rows go in chunks of 2L, float rows in L. */
    static int vectorPart(int k, boolean bf16) {
        return k - k % (bf16 ? BF16_CHUNK : L);
    }

    /** The lanes' sum in one fixed pairwise order. */
    static float sumLanes(FloatVector v) {
        if (L >= 16) v = v.add(v.rearrange(SWAP_8));
        if (L >= 8) v = v.add(v.rearrange(SWAP_4));
        if (L >= 4) v = v.add(v.rearrange(SWAP_2));
        if (L >= 2) v = v.add(v.rearrange(SWAP_1));
        return v.lane(0);
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

    private static float bf16Finish(FloatVector acc, MemorySegment w, long wRow, float[] x, int xRow, int from, int k) {
        float s = sumLanes(acc);
        for (int i = from; i < k; i++) s = Math.fma(bf16ToFloat(w.get(SHORT, wRow + 2L * i)), x[xRow + i], s);
        return s;
    }

    /** One weight row (byte offset wRow) against one split input row. */
    static float bf16Dot(MemorySegment w, long wRow, float[] x, int xRow, int k) {
        int full = vectorPart(k, true);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += BF16_CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, wRow + 2L * c, LE);
            acc = even(p).fma(FloatVector.fromArray(F, x, xRow + c), acc);
            acc = odd(p).fma(FloatVector.fromArray(F, x, xRow + c + L), acc);
        }
        return bf16Finish(acc, w, wRow, x, xRow, full, k);
    }

    /** Four weight rows against one split input row; the four outputs go to {@code out + o0 + 4·i}. */
    static void bf16Tile4x1(MemorySegment w, long w0, long wStride, float[] x, int xRow, int k,
                            MemorySegment out, long o0) {
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
        out.set(FLOAT, o0, bf16Finish(a0, w, w0, x, xRow, full, k));
        out.set(FLOAT, o0 + 4, bf16Finish(a1, w, w1, x, xRow, full, k));
        out.set(FLOAT, o0 + 8, bf16Finish(a2, w, w2, x, xRow, full, k));
        out.set(FLOAT, o0 + 12, bf16Finish(a3, w, w3, x, xRow, full, k));
    }

    // ---------------------------------------------------------------- f32 weights in place

    private static float f32Finish(FloatVector acc, MemorySegment w, long wRow, float[] x, int xRow, int from, int k) {
        float s = sumLanes(acc);
        for (int i = from; i < k; i++) s = Math.fma(w.get(FLOAT, wRow + 4L * i), x[xRow + i], s);
        return s;
    }

    static float f32Dot(MemorySegment w, long wRow, float[] x, int xRow, int k) {
        int full = vectorPart(k, false);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += L) {
            acc = FloatVector.fromMemorySegment(F, w, wRow + 4L * c, LE).fma(FloatVector.fromArray(F, x, xRow + c), acc);
        }
        return f32Finish(acc, w, wRow, x, xRow, full, k);
    }

    static void f32Tile4x1(MemorySegment w, long w0, long wStride, float[] x, int xRow, int k,
                           MemorySegment out, long o0) {
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
        out.set(FLOAT, o0, f32Finish(a0, w, w0, x, xRow, full, k));
        out.set(FLOAT, o0 + 4, f32Finish(a1, w, w1, x, xRow, full, k));
        out.set(FLOAT, o0 + 8, f32Finish(a2, w, w2, x, xRow, full, k));
        out.set(FLOAT, o0 + 12, f32Finish(a3, w, w3, x, xRow, full, k));
    }

    // ---------------------------------------------------------------- widened weights (float arrays)

    private static float finish(FloatVector acc, float[] w, int wRow, float[] x, int xRow, int from, int k) {
        float s = sumLanes(acc);
        for (int i = from; i < k; i++) s = Math.fma(w[wRow + i], x[xRow + i], s);
        return s;
    }

    /** One widened weight row against one input row, vectors over the first {@code full} elements. */
    static float dot(float[] w, int wRow, float[] x, int xRow, int full, int k) {
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += L) {
            acc = FloatVector.fromArray(F, w, wRow + c).fma(FloatVector.fromArray(F, x, xRow + c), acc);
        }
        return finish(acc, w, wRow, x, xRow, full, k);
    }

    static void tile4x1(float[] w, int w0, int wStride, float[] x, int xRow, int full, int k,
                        MemorySegment out, long o0) {
        int w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += L) {
            FloatVector xv = FloatVector.fromArray(F, x, xRow + c);
            a0 = FloatVector.fromArray(F, w, w0 + c).fma(xv, a0);
            a1 = FloatVector.fromArray(F, w, w1 + c).fma(xv, a1);
            a2 = FloatVector.fromArray(F, w, w2 + c).fma(xv, a2);
            a3 = FloatVector.fromArray(F, w, w3 + c).fma(xv, a3);
        }
        out.set(FLOAT, o0, finish(a0, w, w0, x, xRow, full, k));
        out.set(FLOAT, o0 + 4, finish(a1, w, w1, x, xRow, full, k));
        out.set(FLOAT, o0 + 8, finish(a2, w, w2, x, xRow, full, k));
        out.set(FLOAT, o0 + 12, finish(a3, w, w3, x, xRow, full, k));
    }

    /**
     * Four widened weight rows against {@link #TILE_ROWS} input rows, 24 accumulators in registers: each weight vector
     * is loaded once for six FMAs. Output for input row j and weight row i goes to {@code out + o0 + j·oStride + 4·i}.
     */
    static void tile4x6(float[] w, int w0, int wStride, float[] x, int x0, int xStride, int full, int k,
                        MemorySegment out, long o0, long oStride) {
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
        store4(out, o0, w, w0, wStride, x, x0, full, k, a00, a10, a20, a30);
        store4(out, o0 + oStride, w, w0, wStride, x, x1, full, k, a01, a11, a21, a31);
        store4(out, o0 + 2 * oStride, w, w0, wStride, x, x2, full, k, a02, a12, a22, a32);
        store4(out, o0 + 3 * oStride, w, w0, wStride, x, x3, full, k, a03, a13, a23, a33);
        store4(out, o0 + 4 * oStride, w, w0, wStride, x, x4, full, k, a04, a14, a24, a34);
        store4(out, o0 + 5 * oStride, w, w0, wStride, x, x5, full, k, a05, a15, a25, a35);
    }

    private static void store4(MemorySegment out, long o, float[] w, int w0, int wStride, float[] x, int xRow,
                               int full, int k, FloatVector a0, FloatVector a1, FloatVector a2, FloatVector a3) {
        out.set(FLOAT, o, finish(a0, w, w0, x, xRow, full, k));
        out.set(FLOAT, o + 4, finish(a1, w, w0 + wStride, x, xRow, full, k));
        out.set(FLOAT, o + 8, finish(a2, w, w0 + 2 * wStride, x, xRow, full, k));
        out.set(FLOAT, o + 12, finish(a3, w, w0 + 3 * wStride, x, xRow, full, k));
    }
}
