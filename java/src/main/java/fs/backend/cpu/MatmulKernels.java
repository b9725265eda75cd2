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
 * Dot-product tiles of {@code out = x · wᵀ} for bf16 and f32 weight rows.
 *
 * <p>Every output is computed by one fixed chain of operations whatever tile computes it: one vector accumulator
 * fed by FMAs over the chunks of K in order, a fixed tree sum of its lanes, then scalar FMAs over the tail. So a
 * row of a batch gives exactly the floats it gives alone, and the thread that ran it does not matter. (The Vector
 * API's own {@code reduceLanes(ADD)} leaves the order open, and the interpreter and C2 do differ, hence the tree.)
 *
 * <p>bf16 rows are read as ints holding two neighbours: {@code i << 16} is the even element as a float and
 * {@code i & 0xFFFF0000} the odd one, which is cheaper than widening shorts. The input row must then come split the
 * same way: {@link #splitEvenOdd} lays each chunk of {@code 2L} floats out as its L even elements then its L odd ones.
 * Offsets are in bytes; strides are bytes between rows.
 */
final class MatmulKernels {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    static final int L = F.length();
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    /** K elements covered by one bf16 chunk (one int vector of weights). */
    static final int BF16_CHUNK = 2 * L;

    private static final int ODD_BF16 = 0xFFFF0000;
    private static final VectorShuffle<Float> SWAP_8 = F.shuffleFromOp(i -> (i ^ 8) & (L - 1));
    private static final VectorShuffle<Float> SWAP_4 = F.shuffleFromOp(i -> (i ^ 4) & (L - 1));
    private static final VectorShuffle<Float> SWAP_2 = F.shuffleFromOp(i -> (i ^ 2) & (L - 1));
    private static final VectorShuffle<Float> SWAP_1 = F.shuffleFromOp(i -> (i ^ 1) & (L - 1));

    static {
        if (L > 16) throw new IllegalStateException("vector width " + L + " floats is not supported");
    }

    private MatmulKernels() {}

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

    /** Copies a row of K floats from src to dst, each full bf16 chunk reordered as evens then odds. */
    static void splitEvenOdd(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, int k) {
        int full = k - k % BF16_CHUNK;
        for (int c = 0; c < full; c += BF16_CHUNK) {
            for (int j = 0; j < L; j++) {
                long from = srcOffset + 4L * (c + 2 * j);
                long to = dstOffset + 4L * (c + j);
                dst.set(FLOAT, to, src.get(FLOAT, from));
                dst.set(FLOAT, to + 4L * L, src.get(FLOAT, from + 4));
            }
        }
        MemorySegment.copy(src, srcOffset + 4L * full, dst, dstOffset + 4L * full, 4L * (k - full));
    }

    // ---------------------------------------------------------------- bf16 weights, x split by splitEvenOdd

    private static FloatVector even(IntVector pair) {
        return pair.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    private static FloatVector odd(IntVector pair) {
        return pair.and(ODD_BF16).reinterpretAsFloats();
    }

    private static float bf16Finish(FloatVector acc, MemorySegment w, long wRow, MemorySegment x, long xRow,
                                    int from, int k) {
        float s = sumLanes(acc);
        for (int i = from; i < k; i++) {
            s = Math.fma(bf16ToFloat(w.get(SHORT, wRow + 2L * i)), x.get(FLOAT, xRow + 4L * i), s);
        }
        return s;
    }

    /** One weight row against one input row. */
    static float bf16Dot(MemorySegment w, long wRow, MemorySegment x, long xRow, int k) {
        int full = k - k % BF16_CHUNK;
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += BF16_CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, wRow + 2L * c, LE);
            long xo = xRow + 4L * c;
            acc = even(p).fma(FloatVector.fromMemorySegment(F, x, xo, LE), acc);
            acc = odd(p).fma(FloatVector.fromMemorySegment(F, x, xo + 4L * L, LE), acc);
        }
        return bf16Finish(acc, w, wRow, x, xRow, full, k);
    }

    /** Four weight rows against one input row: out[0..3] at {@code out + 4·i}. */
    static void bf16Tile4x1(MemorySegment w, long w0, long wStride, MemorySegment x, long xRow, int k,
                            MemorySegment out, long o0) {
        int full = k - k % BF16_CHUNK;
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += BF16_CHUNK) {
            long wo = 2L * c;
            long xo = xRow + 4L * c;
            FloatVector xe = FloatVector.fromMemorySegment(F, x, xo, LE);
            FloatVector xd = FloatVector.fromMemorySegment(F, x, xo + 4L * L, LE);
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

    /**
     * Four weight rows against four input rows: out for input row j and weight row i at {@code o0 + j·oStride + 4·i}.
     * Each weight chunk is loaded and split once for the four input rows.
     */
    static void bf16Tile4x4(MemorySegment w, long w0, long wStride, MemorySegment x, long x0, long xStride, int k,
                            MemorySegment out, long o0, long oStride) {
        int full = k - k % BF16_CHUNK;
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        long x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int c = 0; c < full; c += BF16_CHUNK) {
            long wo = 2L * c;
            long xo = 4L * c;
            IntVector p0 = IntVector.fromMemorySegment(I, w, w0 + wo, LE);
            IntVector p1 = IntVector.fromMemorySegment(I, w, w1 + wo, LE);
            IntVector p2 = IntVector.fromMemorySegment(I, w, w2 + wo, LE);
            IntVector p3 = IntVector.fromMemorySegment(I, w, w3 + wo, LE);
            FloatVector e0 = even(p0), e1 = even(p1), e2 = even(p2), e3 = even(p3);
            FloatVector d0 = odd(p0), d1 = odd(p1), d2 = odd(p2), d3 = odd(p3);
            FloatVector xe = FloatVector.fromMemorySegment(F, x, x0 + xo, LE);
            FloatVector xd = FloatVector.fromMemorySegment(F, x, x0 + xo + 4L * L, LE);
            a00 = d0.fma(xd, e0.fma(xe, a00));
            a10 = d1.fma(xd, e1.fma(xe, a10));
            a20 = d2.fma(xd, e2.fma(xe, a20));
            a30 = d3.fma(xd, e3.fma(xe, a30));
            xe = FloatVector.fromMemorySegment(F, x, x1 + xo, LE);
            xd = FloatVector.fromMemorySegment(F, x, x1 + xo + 4L * L, LE);
            a01 = d0.fma(xd, e0.fma(xe, a01));
            a11 = d1.fma(xd, e1.fma(xe, a11));
            a21 = d2.fma(xd, e2.fma(xe, a21));
            a31 = d3.fma(xd, e3.fma(xe, a31));
            xe = FloatVector.fromMemorySegment(F, x, x2 + xo, LE);
            xd = FloatVector.fromMemorySegment(F, x, x2 + xo + 4L * L, LE);
            a02 = d0.fma(xd, e0.fma(xe, a02));
            a12 = d1.fma(xd, e1.fma(xe, a12));
            a22 = d2.fma(xd, e2.fma(xe, a22));
            a32 = d3.fma(xd, e3.fma(xe, a32));
            xe = FloatVector.fromMemorySegment(F, x, x3 + xo, LE);
            xd = FloatVector.fromMemorySegment(F, x, x3 + xo + 4L * L, LE);
            a03 = d0.fma(xd, e0.fma(xe, a03));
            a13 = d1.fma(xd, e1.fma(xe, a13));
            a23 = d2.fma(xd, e2.fma(xe, a23));
            a33 = d3.fma(xd, e3.fma(xe, a33));
        }
        long o1 = o0 + oStride, o2 = o1 + oStride, o3 = o2 + oStride;
        out.set(FLOAT, o0, bf16Finish(a00, w, w0, x, x0, full, k));
        out.set(FLOAT, o0 + 4, bf16Finish(a10, w, w1, x, x0, full, k));
        out.set(FLOAT, o0 + 8, bf16Finish(a20, w, w2, x, x0, full, k));
        out.set(FLOAT, o0 + 12, bf16Finish(a30, w, w3, x, x0, full, k));
        out.set(FLOAT, o1, bf16Finish(a01, w, w0, x, x1, full, k));
        out.set(FLOAT, o1 + 4, bf16Finish(a11, w, w1, x, x1, full, k));
        out.set(FLOAT, o1 + 8, bf16Finish(a21, w, w2, x, x1, full, k));
        out.set(FLOAT, o1 + 12, bf16Finish(a31, w, w3, x, x1, full, k));
        out.set(FLOAT, o2, bf16Finish(a02, w, w0, x, x2, full, k));
        out.set(FLOAT, o2 + 4, bf16Finish(a12, w, w1, x, x2, full, k));
        out.set(FLOAT, o2 + 8, bf16Finish(a22, w, w2, x, x2, full, k));
        out.set(FLOAT, o2 + 12, bf16Finish(a32, w, w3, x, x2, full, k));
        out.set(FLOAT, o3, bf16Finish(a03, w, w0, x, x3, full, k));
        out.set(FLOAT, o3 + 4, bf16Finish(a13, w, w1, x, x3, full, k));
        out.set(FLOAT, o3 + 8, bf16Finish(a23, w, w2, x, x3, full, k));
        out.set(FLOAT, o3 + 12, bf16Finish(a33, w, w3, x, x3, full, k));
    }

    // ---------------------------------------------------------------- f32 weights, x as it is

    private static float f32Finish(FloatVector acc, MemorySegment w, long wRow, MemorySegment x, long xRow,
                                   int from, int k) {
        float s = sumLanes(acc);
        for (int i = from; i < k; i++) s = Math.fma(w.get(FLOAT, wRow + 4L * i), x.get(FLOAT, xRow + 4L * i), s);
        return s;
    }

    static float f32Dot(MemorySegment w, long wRow, MemorySegment x, long xRow, int k) {
        int full = k - k % L;
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += L) {
            acc = FloatVector.fromMemorySegment(F, w, wRow + 4L * c, LE)
                    .fma(FloatVector.fromMemorySegment(F, x, xRow + 4L * c, LE), acc);
        }
        return f32Finish(acc, w, wRow, x, xRow, full, k);
    }

    static void f32Tile4x1(MemorySegment w, long w0, long wStride, MemorySegment x, long xRow, int k,
                           MemorySegment out, long o0) {
        int full = k - k % L;
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += L) {
            long o = 4L * c;
            FloatVector xv = FloatVector.fromMemorySegment(F, x, xRow + o, LE);
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

    static void f32Tile4x4(MemorySegment w, long w0, long wStride, MemorySegment x, long x0, long xStride, int k,
                           MemorySegment out, long o0, long oStride) {
        int full = k - k % L;
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        long x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int c = 0; c < full; c += L) {
            long o = 4L * c;
            FloatVector v0 = FloatVector.fromMemorySegment(F, w, w0 + o, LE);
            FloatVector v1 = FloatVector.fromMemorySegment(F, w, w1 + o, LE);
            FloatVector v2 = FloatVector.fromMemorySegment(F, w, w2 + o, LE);
            FloatVector v3 = FloatVector.fromMemorySegment(F, w, w3 + o, LE);
            FloatVector xv = FloatVector.fromMemorySegment(F, x, x0 + o, LE);
            a00 = v0.fma(xv, a00);
            a10 = v1.fma(xv, a10);
            a20 = v2.fma(xv, a20);
            a30 = v3.fma(xv, a30);
            xv = FloatVector.fromMemorySegment(F, x, x1 + o, LE);
            a01 = v0.fma(xv, a01);
            a11 = v1.fma(xv, a11);
            a21 = v2.fma(xv, a21);
            a31 = v3.fma(xv, a31);
            xv = FloatVector.fromMemorySegment(F, x, x2 + o, LE);
            a02 = v0.fma(xv, a02);
            a12 = v1.fma(xv, a12);
            a22 = v2.fma(xv, a22);
            a32 = v3.fma(xv, a32);
            xv = FloatVector.fromMemorySegment(F, x, x3 + o, LE);
            a03 = v0.fma(xv, a03);
            a13 = v1.fma(xv, a13);
            a23 = v2.fma(xv, a23);
            a33 = v3.fma(xv, a33);
        }
        long o1 = o0 + oStride, o2 = o1 + oStride, o3 = o2 + oStride;
        out.set(FLOAT, o0, f32Finish(a00, w, w0, x, x0, full, k));
        out.set(FLOAT, o0 + 4, f32Finish(a10, w, w1, x, x0, full, k));
        out.set(FLOAT, o0 + 8, f32Finish(a20, w, w2, x, x0, full, k));
        out.set(FLOAT, o0 + 12, f32Finish(a30, w, w3, x, x0, full, k));
        out.set(FLOAT, o1, f32Finish(a01, w, w0, x, x1, full, k));
        out.set(FLOAT, o1 + 4, f32Finish(a11, w, w1, x, x1, full, k));
        out.set(FLOAT, o1 + 8, f32Finish(a21, w, w2, x, x1, full, k));
        out.set(FLOAT, o1 + 12, f32Finish(a31, w, w3, x, x1, full, k));
        out.set(FLOAT, o2, f32Finish(a02, w, w0, x, x2, full, k));
        out.set(FLOAT, o2 + 4, f32Finish(a12, w, w1, x, x2, full, k));
        out.set(FLOAT, o2 + 8, f32Finish(a22, w, w2, x, x2, full, k));
        out.set(FLOAT, o2 + 12, f32Finish(a32, w, w3, x, x2, full, k));
        out.set(FLOAT, o3, f32Finish(a03, w, w0, x, x3, full, k));
        out.set(FLOAT, o3 + 4, f32Finish(a13, w, w1, x, x3, full, k));
        out.set(FLOAT, o3 + 8, f32Finish(a23, w, w2, x, x3, full, k));
        out.set(FLOAT, o3 + 12, f32Finish(a33, w, w3, x, x3, full, k));
    }
}
