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
 * The kernels of {@code out = x · wᵀ}, in two forms with two fixed orders of arithmetic.
 *
 * <p><b>One row (decode)</b> reads the weights in place (bf16 or f32 rows of the checkpoint's memory), and is bound
 * by memory: each output is one vector accumulator fed by FMAs over the first {@code full} elements in steps of L, a
 * fixed tree sum of its lanes, then scalar FMAs over the rest, so whichever tile computes it and whichever thread
 * runs it, an output is the same float. (The Vector API's own {@code reduceLanes(ADD)} leaves the order open, so
 * interpreted and compiled code, or two JDK versions, need not agree.) bf16 rows are read as ints holding two
 * neighbours: {@code i << 16} is the even element as a float and {@code i & 0xFFFF0000} the odd one, which is far
 * cheaper than widening shorts (the Vector API does not compile that conversion well). The input row must then come
 * split the same way: each chunk of 2L elements laid out as its L even elements then its L odd ones
 * ({@link #splitEvenOdd}); the tail past the last full chunk stays in order.
 *
 * <p><b>A batch (prefill)</b> is bound by arithmetic. A panel of {@link #PANEL} weight rows is widened and packed
 * k-major once ({@link #packBf16}, {@link #packFloats}), then swept by tiles of {@link #TILE_ROWS} input rows: per k,
 * four weight vectors are loaded and each input row's element is broadcast into four FMAs, 24 accumulators in
 * registers and no sum of lanes at the end (a lane sum per output cost as much as the FMAs at K = 1024). Each output
 * is the plain sequential chain {@code s = fma(w[k], x[k], s)} for k = 0, 1, …, K − 1 from s = 0: exactly what a
 * scalar loop computes, whatever the tile, thread or batch size. A row of a batch and the same row alone therefore
 * differ by float rounding only (the two orders of summation), which the model tests bound.
 */
final class MatmulKernels {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    static final int L = F.length();
    private static final VectorSpecies<Float> HALF = FloatVector.SPECIES_256;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    /** Elements of one bf16 chunk: one int vector of weights. */
    static final int BF16_CHUNK = 2 * L;
    /** Input rows of a batched tile. */
    static final int TILE_ROWS = 6;
    /** Weight rows of a packed panel: the four vectors of outputs a batched tile computes per input row. */
    static final int PANEL = 4 * L;

    private static final int ODD_BF16 = 0xFFFF0000;
    private static final VectorShuffle<Float> EVENS = VectorShuffle.fromOp(F, j -> 2 * j);
    private static final VectorShuffle<Float> ODDS = VectorShuffle.fromOp(F, j -> 2 * j + 1);

    /** Floats of the lane scratch the one-row tiles need: one vector per accumulator. */
    static final int LANES_SCRATCH = 4 * L;

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

    // ---------------------------------------------------------------- batched: packed panels

    /**
     * Packs bf16 weight rows [row0, row0 + count) of a matrix with k columns (count ≤ PANEL) into {@code panel}:
     * element k of row row0 + j at {@code panel[k·PANEL + j]} as a float; rows j ≥ count are zero. The rows are first
     * copied as ints (pairs of neighbours) to {@code pairs}, {@code pairStride} ints apart, then gathered L rows at a
     * time: one gather yields two columns of the panel. {@code gatherIndex} holds j·pairStride for j < L.
     */
    static void packBf16(MemorySegment w, int k, int row0, int count, int[] pairs, int pairStride, int[] gatherIndex,
                         float[] panel) {
        int halfK = k / 2;
        for (int j = 0; j < PANEL; j++) {
            if (j < count) MemorySegment.copy(w, INT, 2L * (row0 + j) * k, pairs, j * pairStride, halfK);
            else java.util.Arrays.fill(pairs, j * pairStride, j * pairStride + halfK, 0);
        }
        for (int g = 0; g < PANEL; g += L) {
            int base = g * pairStride;
            for (int c = 0; c < halfK; c++) {
                IntVector p = IntVector.fromArray(I, pairs, base + c, gatherIndex, 0);
                even(p).intoArray(panel, 2 * c * PANEL + g);
                odd(p).intoArray(panel, (2 * c + 1) * PANEL + g);
            }
        }
        if (k % 2 != 0) {
            for (int j = 0; j < PANEL; j++) {
                panel[(k - 1) * PANEL + j] = j < count ? bf16ToFloat(w.get(SHORT, 2L * ((long) (row0 + j) * k + k - 1))) : 0f;
            }
        }
    }

    /**
     * Packs rows [row0, row0 + count) of an f32 or f16 matrix as {@link #packBf16} does, through {@code rows} (PANEL
     * rows of floats, {@code rowStride} apart) and a gather per column; {@code gatherIndex} holds j·rowStride.
     */
    static void packFloats(MemorySegment w, boolean f16, int k, int row0, int count, float[] rows, int rowStride,
                           int[] gatherIndex, float[] panel) {
        for (int j = 0; j < PANEL; j++) {
            int dst = j * rowStride;
            if (j >= count) java.util.Arrays.fill(rows, dst, dst + k, 0f);
            else if (!f16) MemorySegment.copy(w, FLOAT, 4L * (row0 + j) * k, rows, dst, k);
            else for (int i = 0; i < k; i++) rows[dst + i] = Float.float16ToFloat(w.get(SHORT, 2L * ((long) (row0 + j) * k + i)));
        }
        for (int g = 0; g < PANEL; g += L) {
            for (int c = 0; c < k; c++) {
                FloatVector.fromArray(F, rows, g * rowStride + c, gatherIndex, 0).intoArray(panel, c * PANEL + g);
            }
        }
    }

    /**
     * {@link #TILE_ROWS} input rows ({@code x0 + i·xStride}) against a packed panel over k: the PANEL outputs of input
     * row i go to {@code out + o0 + i·oStride}. Each output is the sequential FMA chain over k.
     */
    static void tile6(float[] panel, int k, float[] x, int x0, int xStride, MemorySegment out, long o0, long oStride) {
        int x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride, x4 = x3 + xStride, x5 = x4 + xStride;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        FloatVector a40 = a00, a41 = a00, a42 = a00, a43 = a00;
        FloatVector a50 = a00, a51 = a00, a52 = a00, a53 = a00;
        for (int c = 0; c < k; c++) {
            int p = c * PANEL;
            FloatVector w0 = FloatVector.fromArray(F, panel, p);
            FloatVector w1 = FloatVector.fromArray(F, panel, p + L);
            FloatVector w2 = FloatVector.fromArray(F, panel, p + 2 * L);
            FloatVector w3 = FloatVector.fromArray(F, panel, p + 3 * L);
            FloatVector b = FloatVector.broadcast(F, x[x0 + c]);
            a00 = w0.fma(b, a00);
            a01 = w1.fma(b, a01);
            a02 = w2.fma(b, a02);
            a03 = w3.fma(b, a03);
            b = FloatVector.broadcast(F, x[x1 + c]);
            a10 = w0.fma(b, a10);
            a11 = w1.fma(b, a11);
            a12 = w2.fma(b, a12);
            a13 = w3.fma(b, a13);
            b = FloatVector.broadcast(F, x[x2 + c]);
            a20 = w0.fma(b, a20);
            a21 = w1.fma(b, a21);
            a22 = w2.fma(b, a22);
            a23 = w3.fma(b, a23);
            b = FloatVector.broadcast(F, x[x3 + c]);
            a30 = w0.fma(b, a30);
            a31 = w1.fma(b, a31);
            a32 = w2.fma(b, a32);
            a33 = w3.fma(b, a33);
            b = FloatVector.broadcast(F, x[x4 + c]);
            a40 = w0.fma(b, a40);
            a41 = w1.fma(b, a41);
            a42 = w2.fma(b, a42);
            a43 = w3.fma(b, a43);
            b = FloatVector.broadcast(F, x[x5 + c]);
            a50 = w0.fma(b, a50);
            a51 = w1.fma(b, a51);
            a52 = w2.fma(b, a52);
            a53 = w3.fma(b, a53);
        }
        long v = 4L * L, o = o0;
        a00.intoMemorySegment(out, o, LE);
        a01.intoMemorySegment(out, o + v, LE);
        a02.intoMemorySegment(out, o + 2 * v, LE);
        a03.intoMemorySegment(out, o + 3 * v, LE);
        o += oStride;
        a10.intoMemorySegment(out, o, LE);
        a11.intoMemorySegment(out, o + v, LE);
        a12.intoMemorySegment(out, o + 2 * v, LE);
        a13.intoMemorySegment(out, o + 3 * v, LE);
        o += oStride;
        a20.intoMemorySegment(out, o, LE);
        a21.intoMemorySegment(out, o + v, LE);
        a22.intoMemorySegment(out, o + 2 * v, LE);
        a23.intoMemorySegment(out, o + 3 * v, LE);
        o += oStride;
        a30.intoMemorySegment(out, o, LE);
        a31.intoMemorySegment(out, o + v, LE);
        a32.intoMemorySegment(out, o + 2 * v, LE);
        a33.intoMemorySegment(out, o + 3 * v, LE);
        o += oStride;
        a40.intoMemorySegment(out, o, LE);
        a41.intoMemorySegment(out, o + v, LE);
        a42.intoMemorySegment(out, o + 2 * v, LE);
        a43.intoMemorySegment(out, o + 3 * v, LE);
        o += oStride;
        a50.intoMemorySegment(out, o, LE);
        a51.intoMemorySegment(out, o + v, LE);
        a52.intoMemorySegment(out, o + 2 * v, LE);
        a53.intoMemorySegment(out, o + 3 * v, LE);
    }
}
