package fs.backend.cpu;

import static fs.backend.cpu.DecodedRowTiles.SECOND_ROW_LANES;
import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.I;
import static fs.backend.cpu.MatmulKernels.INT;
import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.LE;
import static fs.backend.cpu.MatmulKernels.PANEL;
import static fs.backend.cpu.MatmulKernels.SHORT;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;

/**
 * bfloat16 rows, read as ints holding two neighbours: {@code i << 16} is the even element as a float and
 * {@code i & 0xFFFF0000} the odd one, which is far cheaper than widening shorts (the Vector API does not compile that
 * conversion well). The tiles' input row comes split the same way ({@link #loadInput}): each chunk of 2L elements
 * laid out as its L even elements then its L odd ones; the tail past the last full chunk stays in order.
 * {@link #dot} splits each chunk of its plain input as it goes, so it computes the tiles' floats.
 */
final class Bf16Rows implements InPlaceRowTiles, PanelPacking {
    static final Bf16Rows INSTANCE = new Bf16Rows();

    /** Elements of one chunk: one int vector of weights. */
    private static final int CHUNK = 2 * L;
    private static final int ODD_BF16 = 0xFFFF0000;
    private static final VectorShuffle<Float> EVENS = VectorShuffle.fromOp(F, j -> 2 * j);
    private static final VectorShuffle<Float> ODDS = VectorShuffle.fromOp(F, j -> 2 * j + 1);

    private Bf16Rows() {}

    static float bf16ToFloat(short bits) {
        return Float.intBitsToFloat(bits << 16);
    }

    private static FloatVector even(IntVector pair) {
        return pair.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    private static FloatVector odd(IntVector pair) {
        return pair.and(ODD_BF16).reinterpretAsFloats();
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int i = 0; i < k; i++) out[outOffset + i] = bf16ToFloat(w.get(SHORT, rowOffset + 2L * i));
    }

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, rowOffset + 2L * c, LE);
            FloatVector a = FloatVector.fromArray(F, x, xOffset + c), b = FloatVector.fromArray(F, x, xOffset + c + L);
            acc = even(p).fma(a.rearrange(EVENS, b), acc);
            acc = odd(p).fma(a.rearrange(ODDS, b), acc);
        }
        acc.intoArray(lanes, 0);
        return finish(MatmulKernels.sumLanes(lanes, 0), w, rowOffset, x, xOffset, full, k);
    }

    @Override
    public void loadInput(MemorySegment src, long srcOffset, float[] dst, int dstOffset, int k) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        for (int c = 0; c < full; c += CHUNK) {
            FloatVector a = FloatVector.fromMemorySegment(F, src, srcOffset + 4L * c, LE);
            FloatVector b = FloatVector.fromMemorySegment(F, src, srcOffset + 4L * (c + L), LE);
            a.rearrange(EVENS, b).intoArray(dst, dstOffset + c);
            a.rearrange(ODDS, b).intoArray(dst, dstOffset + c + L);
        }
        MemorySegment.copy(src, FLOAT, srcOffset + 4L * full, dst, dstOffset + full, k - full);
    }

    /** Each chunk of 2L as its L even elements then its L odd ones, the tail in order: as {@link #loadInput} does. */
    @Override
    public void decodeAsLoaded(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        int full = tileVectorPart(k);
        for (int c = 0; c < full; c += CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, rowOffset + 2L * c, LE);
            even(p).intoArray(out, outOffset + c);
            odd(p).intoArray(out, outOffset + c + L);
        }
        for (int i = full; i < k; i++) out[outOffset + i] = bf16ToFloat(w.get(SHORT, rowOffset + 2L * i));
    }

    @Override
    public int tileVectorPart(int k) {
        return MatmulKernels.vectorPart(k, CHUNK);
    }

    /** Adds the tail [from, k) of a row's dot product to the sum of its vector part. */
    private static float finish(float s, MemorySegment w, long wRow, float[] x, int xRow, int from, int k) {
        for (int i = from; i < k; i++) s = Math.fma(bf16ToFloat(w.get(SHORT, wRow + 2L * i)), x[xRow + i], s);
        return s;
    }

    @Override
    public float tile1(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, rowOffset + 2L * c, LE);
            acc = even(p).fma(FloatVector.fromArray(F, x, xOffset + c), acc);
            acc = odd(p).fma(FloatVector.fromArray(F, x, xOffset + c + L), acc);
        }
        acc.intoArray(lanes, 0);
        return finish(MatmulKernels.sumLanes(lanes, 0), w, rowOffset, x, xOffset, full, k);
    }

    @Override
    public void tile4(MemorySegment w, long w0, long wStride, float[] x, int xOffset, int k, MemorySegment out, long o0,
                      long oStride, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += CHUNK) {
            long wo = 2L * c;
            FloatVector xe = FloatVector.fromArray(F, x, xOffset + c);
            FloatVector xd = FloatVector.fromArray(F, x, xOffset + c + L);
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
            float s = MatmulKernels.sumLanes(lanes, i * L);
            out.set(FLOAT, o0 + i * oStride, finish(s, w, w0 + i * wStride, x, xOffset, full, k));
        }
    }

    @Override
    public void tile2(MemorySegment w, long w0, long w1, float[] x, int x0, int xStride, int inputRows, int k,
                      float[] lanes, MemorySegment out, long o0, long o1, long oStride) {
        switch (inputRows) {
            case 8 -> tile2x8(w, w0, w1, x, x0, xStride, k, lanes);
            case 4 -> tile2x4(w, w0, w1, x, x0, xStride, k, lanes);
            case 2 -> tile2x2(w, w0, w1, x, x0, xStride, k, lanes);
            case 1 -> tile2x1(w, w0, w1, x, x0, k, lanes);
            default -> throw new IllegalArgumentException("input rows of a tile: " + inputRows);
        }
        int full = tileVectorPart(k);
        for (int j = 0; j < inputRows; j++) {
            int xj = x0 + j * xStride;
            out.set(FLOAT, o0 + j * oStride, finish(MatmulKernels.sumLanes(lanes, j * L), w, w0, x, xj, full, k));
            float second = MatmulKernels.sumLanes(lanes, SECOND_ROW_LANES + j * L);
            out.set(FLOAT, o1 + j * oStride, finish(second, w, w1, x, xj, full, k));
        }
    }

    /**
     * Two rows by eight input rows: each weight vector is widened once for all eight, half as often as by two
     * {@link #tile2x4}s. 16 accumulators, 4 widened weight vectors and 2 input vectors fit AVX-512's 32 registers.
     * Input row j's accumulators go to lanes j·L and SECOND_ROW_LANES + j·L.
     */
    private static void tile2x8(MemorySegment w, long w0, long w1, float[] x, int x0, int xStride, int k, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        int x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        int x4 = x3 + xStride, x5 = x4 + xStride, x6 = x5 + xStride, x7 = x6 + xStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        FloatVector b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
        for (int c = 0; c < full; c += CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, w0 + 2L * c, LE);
            IntVector q = IntVector.fromMemorySegment(I, w, w1 + 2L * c, LE);
            FloatVector pe = even(p), po = odd(p), qe = even(q), qo = odd(q);
            FloatVector e0 = FloatVector.fromArray(F, x, x0 + c), o0 = FloatVector.fromArray(F, x, x0 + c + L);
            a0 = po.fma(o0, pe.fma(e0, a0));
            b0 = qo.fma(o0, qe.fma(e0, b0));
            FloatVector e1 = FloatVector.fromArray(F, x, x1 + c), o1 = FloatVector.fromArray(F, x, x1 + c + L);
            a1 = po.fma(o1, pe.fma(e1, a1));
            b1 = qo.fma(o1, qe.fma(e1, b1));
            FloatVector e2 = FloatVector.fromArray(F, x, x2 + c), o2 = FloatVector.fromArray(F, x, x2 + c + L);
            a2 = po.fma(o2, pe.fma(e2, a2));
            b2 = qo.fma(o2, qe.fma(e2, b2));
            FloatVector e3 = FloatVector.fromArray(F, x, x3 + c), o3 = FloatVector.fromArray(F, x, x3 + c + L);
            a3 = po.fma(o3, pe.fma(e3, a3));
            b3 = qo.fma(o3, qe.fma(e3, b3));
            FloatVector e4 = FloatVector.fromArray(F, x, x4 + c), o4 = FloatVector.fromArray(F, x, x4 + c + L);
            a4 = po.fma(o4, pe.fma(e4, a4));
            b4 = qo.fma(o4, qe.fma(e4, b4));
            FloatVector e5 = FloatVector.fromArray(F, x, x5 + c), o5 = FloatVector.fromArray(F, x, x5 + c + L);
            a5 = po.fma(o5, pe.fma(e5, a5));
            b5 = qo.fma(o5, qe.fma(e5, b5));
            FloatVector e6 = FloatVector.fromArray(F, x, x6 + c), o6 = FloatVector.fromArray(F, x, x6 + c + L);
            a6 = po.fma(o6, pe.fma(e6, a6));
            b6 = qo.fma(o6, qe.fma(e6, b6));
            FloatVector e7 = FloatVector.fromArray(F, x, x7 + c), o7 = FloatVector.fromArray(F, x, x7 + c + L);
            a7 = po.fma(o7, pe.fma(e7, a7));
            b7 = qo.fma(o7, qe.fma(e7, b7));
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        a4.intoArray(lanes, 4 * L);
        a5.intoArray(lanes, 5 * L);
        a6.intoArray(lanes, 6 * L);
        a7.intoArray(lanes, 7 * L);
        b0.intoArray(lanes, SECOND_ROW_LANES);
        b1.intoArray(lanes, SECOND_ROW_LANES + L);
        b2.intoArray(lanes, SECOND_ROW_LANES + 2 * L);
        b3.intoArray(lanes, SECOND_ROW_LANES + 3 * L);
        b4.intoArray(lanes, SECOND_ROW_LANES + 4 * L);
        b5.intoArray(lanes, SECOND_ROW_LANES + 5 * L);
        b6.intoArray(lanes, SECOND_ROW_LANES + 6 * L);
        b7.intoArray(lanes, SECOND_ROW_LANES + 7 * L);
    }

    /** Two rows by four input rows; input row j's accumulators go to lanes j·L and SECOND_ROW_LANES + j·L. */
    private static void tile2x4(MemorySegment w, long w0, long w1, float[] x, int x0, int xStride, int k, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        int x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        FloatVector b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int c = 0; c < full; c += CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, w0 + 2L * c, LE);
            IntVector q = IntVector.fromMemorySegment(I, w, w1 + 2L * c, LE);
            FloatVector pe = even(p), po = odd(p), qe = even(q), qo = odd(q);
            FloatVector e = FloatVector.fromArray(F, x, x0 + c), o = FloatVector.fromArray(F, x, x0 + c + L);
            a0 = po.fma(o, pe.fma(e, a0));
            b0 = qo.fma(o, qe.fma(e, b0));
            e = FloatVector.fromArray(F, x, x1 + c);
            o = FloatVector.fromArray(F, x, x1 + c + L);
            a1 = po.fma(o, pe.fma(e, a1));
            b1 = qo.fma(o, qe.fma(e, b1));
            e = FloatVector.fromArray(F, x, x2 + c);
            o = FloatVector.fromArray(F, x, x2 + c + L);
            a2 = po.fma(o, pe.fma(e, a2));
            b2 = qo.fma(o, qe.fma(e, b2));
            e = FloatVector.fromArray(F, x, x3 + c);
            o = FloatVector.fromArray(F, x, x3 + c + L);
            a3 = po.fma(o, pe.fma(e, a3));
            b3 = qo.fma(o, qe.fma(e, b3));
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        b0.intoArray(lanes, SECOND_ROW_LANES);
        b1.intoArray(lanes, SECOND_ROW_LANES + L);
        b2.intoArray(lanes, SECOND_ROW_LANES + 2 * L);
        b3.intoArray(lanes, SECOND_ROW_LANES + 3 * L);
    }

    /** {@link #tile2x4} for two input rows. */
    private static void tile2x2(MemorySegment w, long w0, long w1, float[] x, int x0, int xStride, int k, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        int x1 = x0 + xStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, b0 = a0, b1 = a0;
        for (int c = 0; c < full; c += CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, w0 + 2L * c, LE);
            IntVector q = IntVector.fromMemorySegment(I, w, w1 + 2L * c, LE);
            FloatVector pe = even(p), po = odd(p), qe = even(q), qo = odd(q);
            FloatVector e = FloatVector.fromArray(F, x, x0 + c), o = FloatVector.fromArray(F, x, x0 + c + L);
            a0 = po.fma(o, pe.fma(e, a0));
            b0 = qo.fma(o, qe.fma(e, b0));
            e = FloatVector.fromArray(F, x, x1 + c);
            o = FloatVector.fromArray(F, x, x1 + c + L);
            a1 = po.fma(o, pe.fma(e, a1));
            b1 = qo.fma(o, qe.fma(e, b1));
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        b0.intoArray(lanes, SECOND_ROW_LANES);
        b1.intoArray(lanes, SECOND_ROW_LANES + L);
    }

    /** {@link #tile2x4} for one input row. */
    private static void tile2x1(MemorySegment w, long w0, long w1, float[] x, int x0, int k, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, CHUNK);
        FloatVector a0 = FloatVector.zero(F), b0 = a0;
        for (int c = 0; c < full; c += CHUNK) {
            IntVector p = IntVector.fromMemorySegment(I, w, w0 + 2L * c, LE);
            IntVector q = IntVector.fromMemorySegment(I, w, w1 + 2L * c, LE);
            FloatVector e = FloatVector.fromArray(F, x, x0 + c), o = FloatVector.fromArray(F, x, x0 + c + L);
            a0 = odd(p).fma(o, even(p).fma(e, a0));
            b0 = odd(q).fma(o, even(q).fma(e, b0));
        }
        a0.intoArray(lanes, 0);
        b0.intoArray(lanes, SECOND_ROW_LANES);
    }

    /**
     * The rows are first copied as ints (pairs of neighbours) to {@code scratch.pairs}, then gathered L rows at a
     * time: one gather yields two columns of the panel.
     */
    @Override
    public void pack(MemorySegment w, long rowBytes, int k, int row0, int count, PanelScratch scratch) {
        scratch.fitPairs();
        int[] pairs = scratch.pairs;
        float[] panel = scratch.panel;
        int pairStride = scratch.pairStride, halfK = k / 2;
        for (int j = 0; j < PANEL; j++) {
            if (j < count) MemorySegment.copy(w, INT, (row0 + j) * rowBytes, pairs, j * pairStride, halfK);
            else Arrays.fill(pairs, j * pairStride, j * pairStride + halfK, 0);
        }
        for (int g = 0; g < PANEL; g += L) {
            int base = g * pairStride;
            for (int c = 0; c < halfK; c++) {
                IntVector p = IntVector.fromArray(I, pairs, base + c, scratch.pairGather, 0);
                even(p).intoArray(panel, 2 * c * PANEL + g);
                odd(p).intoArray(panel, (2 * c + 1) * PANEL + g);
            }
        }
        if (k % 2 != 0) {
            for (int j = 0; j < PANEL; j++) {
                panel[(k - 1) * PANEL + j] = j < count ? bf16ToFloat(w.get(SHORT, (row0 + j) * rowBytes + 2L * (k - 1))) : 0f;
            }
        }
    }
}
