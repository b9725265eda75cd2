package fs.backend.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * What the matmul kernels of every format share, and the batched kernel itself. Each format's own kernels are in
 * its {@link RowFormat}.
 *
 * <p><b>One row (decode)</b> is bound by memory and reads the weights in place. A format's kernels sum each output in
 * a fixed order: vector accumulators fed over the row, a fixed tree sum of their lanes ({@link #sumLanes}), then the
 * scalar tail, so whichever tile computes it and whichever thread runs it, an output is the same float. (The Vector
 * API's own {@code reduceLanes(ADD)} leaves the order open, so interpreted and compiled code, or two JDK versions,
 * need not agree.)
 *
 * <p><b>A batch (prefill)</b> is bound by arithmetic. A panel of {@link #PANEL} weight rows is decoded and packed
 * k-major once (by the format's {@link PanelPacking}, or {@link #packRows} from its dequantized rows), then swept by
 * tiles of {@link #TILE_ROWS} input rows: per k, {@link #PANEL_VECTORS} weight vectors are loaded and each input row's
 * element is broadcast into as many FMAs, all accumulators in registers and no sum of lanes at the end (a lane sum per output cost
 * as much as the FMAs at K = 1024). Each output is the plain sequential chain {@code s = fma(w[k], x[k], s)} for
 * k = 0, 1, …, K − 1 from s = 0 over the dequantized weights: exactly what a scalar loop computes, whatever the
 * format, tile, thread or batch size. A row of a batch and the same row alone therefore differ by float rounding only
 * (the two orders of summation), which the model tests bound.
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
    /** Input rows of a batched tile. */
    static final int TILE_ROWS = 6;
    /**
     * Vectors of outputs a batched tile computes per input row: four (24 accumulators, 29 registers with the weights
     * and the broadcast) where the machine has 32 vector registers (AVX-512; NEON, and AVX-512 machines at 128 bits),
     * two (15) on AVX2's 16, where four spill accumulators on every k. PrefillMatmulBench (bf16, 128 rows, one thread,
     * 2026-12-01): at 8 lanes two vectors ran 2-3× the GFLOP/s of four; at 4 and 16 lanes four were as fast or faster.
     */
    static final int PANEL_VECTORS = L == 8 ? 2 : 4;
    /** Weight rows of a packed panel: the vectors of outputs a batched tile computes per input row. */
    static final int PANEL = PANEL_VECTORS * L;
    /** Floats of the lane scratch the one-row tiles need: one vector per accumulator. */
    static final int LANES_SCRATCH = 4 * L;

    private MatmulKernels() {}

    /**
     * Σ w[j]·x[xOffset + j] over k: L lanes of FMAs over the vector part, summed by {@link #sumLanes}, then the tail
     * as a sequential FMA chain onto that sum. {@code lanes} is scratch of L floats.
     */
    static float laneDot(float[] w, float[] x, int xOffset, int k, float[] lanes) {
        int full = vectorPart(k, L);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += L) {
            acc = FloatVector.fromArray(F, w, c).fma(FloatVector.fromArray(F, x, xOffset + c), acc);
        }
        acc.intoArray(lanes, 0);
        float s = sumLanes(lanes, 0);
        for (int j = full; j < k; j++) s = Math.fma(w[j], x[xOffset + j], s);
        return s;
    }

    /** The elements a loop in steps of {@code step} covers of a row of k. */
    static int vectorPart(int k, int step) {
        return k - k % step;
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

    /**
     * Packs rows [row0, row0 + count) of a matrix in any format (count ≤ PANEL) into {@code scratch.panel}, element c
     * of row row0 + j at {@code panel[c·PANEL + j]}, rows j ≥ count zero: each row is dequantized into
     * {@code scratch.rows}, then a gather per column of L rows transposes them.
     */
    static void packRows(RowFormat format, MemorySegment w, long rowBytes, int k, int row0, int count,
                         PanelScratch scratch) {
        float[] rows = scratch.rows, panel = scratch.panel;
        int rowStride = scratch.rowStride;
        for (int j = 0; j < PANEL; j++) {
            int dst = j * rowStride;
            if (j < count) format.dequantize(w, (row0 + j) * rowBytes, k, rows, dst);
            else Arrays.fill(rows, dst, dst + k, 0f);
        }
        for (int g = 0; g < PANEL; g += L) {
            for (int c = 0; c < k; c++) {
                FloatVector.fromArray(F, rows, g * rowStride + c, scratch.rowGather, 0).intoArray(panel, c * PANEL + g);
            }
        }
    }

    /**
     * {@link #TILE_ROWS} input rows ({@code x0 + i·xStride}) against a packed panel over k: the PANEL outputs of input
     * row i go to {@code out + o0 + i·oStride}. Each output is the sequential FMA chain over k.
     */
    static void tile6(float[] panel, int k, float[] x, int x0, int xStride, MemorySegment out, long o0, long oStride) {
        if (PANEL_VECTORS == 2) tile6x2(panel, k, x, x0, xStride, out, o0, oStride);
        else tile6x4(panel, k, x, x0, xStride, out, o0, oStride);
    }

    /** {@link #tile6} of a panel of two vectors: 12 accumulators. */
    private static void tile6x2(float[] panel, int k, float[] x, int x0, int xStride, MemorySegment out, long o0,
                                long oStride) {
        int x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride, x4 = x3 + xStride, x5 = x4 + xStride;
        FloatVector a00 = FloatVector.zero(F), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
        FloatVector a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
        for (int c = 0; c < k; c++) {
            int p = c * PANEL;
            FloatVector w0 = FloatVector.fromArray(F, panel, p);
            FloatVector w1 = FloatVector.fromArray(F, panel, p + L);
            FloatVector b = FloatVector.broadcast(F, x[x0 + c]);
            a00 = w0.fma(b, a00);
            a01 = w1.fma(b, a01);
            b = FloatVector.broadcast(F, x[x1 + c]);
            a10 = w0.fma(b, a10);
            a11 = w1.fma(b, a11);
            b = FloatVector.broadcast(F, x[x2 + c]);
            a20 = w0.fma(b, a20);
            a21 = w1.fma(b, a21);
            b = FloatVector.broadcast(F, x[x3 + c]);
            a30 = w0.fma(b, a30);
            a31 = w1.fma(b, a31);
            b = FloatVector.broadcast(F, x[x4 + c]);
            a40 = w0.fma(b, a40);
            a41 = w1.fma(b, a41);
            b = FloatVector.broadcast(F, x[x5 + c]);
            a50 = w0.fma(b, a50);
            a51 = w1.fma(b, a51);
        }
        long v = 4L * L, o = o0;
        a00.intoMemorySegment(out, o, LE);
        a01.intoMemorySegment(out, o + v, LE);
        o += oStride;
        a10.intoMemorySegment(out, o, LE);
        a11.intoMemorySegment(out, o + v, LE);
        o += oStride;
        a20.intoMemorySegment(out, o, LE);
        a21.intoMemorySegment(out, o + v, LE);
        o += oStride;
        a30.intoMemorySegment(out, o, LE);
        a31.intoMemorySegment(out, o + v, LE);
        o += oStride;
        a40.intoMemorySegment(out, o, LE);
        a41.intoMemorySegment(out, o + v, LE);
        o += oStride;
        a50.intoMemorySegment(out, o, LE);
        a51.intoMemorySegment(out, o + v, LE);
    }

    /** {@link #tile6} of a panel of four vectors: 24 accumulators. */
    private static void tile6x4(float[] panel, int k, float[] x, int x0, int xStride, MemorySegment out, long o0,
                                long oStride) {
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
