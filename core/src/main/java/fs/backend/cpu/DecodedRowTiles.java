package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;

/**
 * The kernels of a few input rows (a scheduler's decode step, one row per stream) against weight rows already
 * decoded to floats: tiles of two weight rows by up to four input rows, one accumulator per pair kept in registers,
 * so each weight vector is loaded once for all the tile's input rows and each input vector once for both weight
 * rows (one FMA per load and a half, where a dot per pair needs two loads per FMA).
 *
 * <p>Each output is computed exactly as {@link MatmulKernels#laneDot} computes it: L lanes of FMAs over the vector
 * part [0, full), the fixed tree of {@link MatmulKernels#sumLanes}, then the tail [full, k) as a sequential FMA chain.
 * So it is the same float whichever tile, row count or thread computes it, and with the row and the input laid out
 * as a tiled format's one-row kernel reads them (and its {@code full}) it is that kernel's float too.
 *
 * <p>Written out by hand, as the other kernels are: C2 keeps the accumulators in registers only while no vector
 * crosses a call it does not inline.
 */
final class DecodedRowTiles {
    /**
     * The most input rows of a few-rows tile: bf16's in-place tile of eight ({@link InPlaceRowTiles}); these tiles
     * stop at four, where a tile of eight measured no faster (2026-12-01, docs/PERFORMANCE.md).
     */
    static final int MAX_INPUT_ROWS = 8;
    /** Where a tile's lane scratch holds the second weight row's accumulators (input row j's at + j·L). */
    static final int SECOND_ROW_LANES = MAX_INPUT_ROWS * L;
    /** Floats of lane scratch a tile needs: one vector per accumulator. */
    static final int LANES_SCRATCH = 2 * SECOND_ROW_LANES;

    private DecodedRowTiles() {}

    /**
     * Weight rows {@code w[w0..]} and {@code w[w1..]} against the four input rows {@code x[x0 + j·xStride..]}: the
     * outputs of input row j go to {@code out + o0 + j·oStride} and {@code out + o1 + j·oStride}.
     */
    static void tile2x4(float[] w, int w0, int w1, float[] x, int x0, int xStride, int full, int k, float[] lanes,
                        MemorySegment out, long o0, long o1, long oStride) {
        int x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        FloatVector b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int c = 0; c < full; c += L) {
            FloatVector u = FloatVector.fromArray(F, w, w0 + c);
            FloatVector v = FloatVector.fromArray(F, w, w1 + c);
            FloatVector e = FloatVector.fromArray(F, x, x0 + c);
            a0 = u.fma(e, a0);
            b0 = v.fma(e, b0);
            e = FloatVector.fromArray(F, x, x1 + c);
            a1 = u.fma(e, a1);
            b1 = v.fma(e, b1);
            e = FloatVector.fromArray(F, x, x2 + c);
            a2 = u.fma(e, a2);
            b2 = v.fma(e, b2);
            e = FloatVector.fromArray(F, x, x3 + c);
            a3 = u.fma(e, a3);
            b3 = v.fma(e, b3);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        b0.intoArray(lanes, SECOND_ROW_LANES);
        b1.intoArray(lanes, SECOND_ROW_LANES + L);
        b2.intoArray(lanes, SECOND_ROW_LANES + 2 * L);
        b3.intoArray(lanes, SECOND_ROW_LANES + 3 * L);
        finishTile(w, w0, w1, x, x0, xStride, 4, full, k, lanes, out, o0, o1, oStride);
    }

    /** {@link #tile2x4} for two input rows. */
    static void tile2x2(float[] w, int w0, int w1, float[] x, int x0, int xStride, int full, int k, float[] lanes,
                        MemorySegment out, long o0, long o1, long oStride) {
        int x1 = x0 + xStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, b0 = a0, b1 = a0;
        for (int c = 0; c < full; c += L) {
            FloatVector u = FloatVector.fromArray(F, w, w0 + c);
            FloatVector v = FloatVector.fromArray(F, w, w1 + c);
            FloatVector e = FloatVector.fromArray(F, x, x0 + c);
            a0 = u.fma(e, a0);
            b0 = v.fma(e, b0);
            e = FloatVector.fromArray(F, x, x1 + c);
            a1 = u.fma(e, a1);
            b1 = v.fma(e, b1);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        b0.intoArray(lanes, SECOND_ROW_LANES);
        b1.intoArray(lanes, SECOND_ROW_LANES + L);
        finishTile(w, w0, w1, x, x0, xStride, 2, full, k, lanes, out, o0, o1, oStride);
    }

    /** {@link #tile2x4} for one input row. */
    static void tile2x1(float[] w, int w0, int w1, float[] x, int x0, int full, int k, float[] lanes,
                        MemorySegment out, long o0, long o1) {
        FloatVector a0 = FloatVector.zero(F), b0 = a0;
        for (int c = 0; c < full; c += L) {
            FloatVector e = FloatVector.fromArray(F, x, x0 + c);
            a0 = FloatVector.fromArray(F, w, w0 + c).fma(e, a0);
            b0 = FloatVector.fromArray(F, w, w1 + c).fma(e, b0);
        }
        a0.intoArray(lanes, 0);
        b0.intoArray(lanes, SECOND_ROW_LANES);
        finishTile(w, w0, w1, x, x0, 0, 1, full, k, lanes, out, o0, o1, 0);
    }

    /** Sums the lanes of a tile's accumulators (input row j's at j·L and SECOND_ROW_LANES + j·L), adds the tails. */
    private static void finishTile(float[] w, int w0, int w1, float[] x, int x0, int xStride, int inputRows, int full,
                                   int k, float[] lanes, MemorySegment out, long o0, long o1, long oStride) {
        for (int j = 0; j < inputRows; j++) {
            int xj = x0 + j * xStride;
            out.set(FLOAT, o0 + j * oStride, tail(MatmulKernels.sumLanes(lanes, j * L), w, w0, x, xj, full, k));
            float second = MatmulKernels.sumLanes(lanes, SECOND_ROW_LANES + j * L);
            out.set(FLOAT, o1 + j * oStride, tail(second, w, w1, x, xj, full, k));
        }
    }

    private static float tail(float s, float[] w, int w0, float[] x, int x0, int from, int k) {
        for (int j = from; j < k; j++) s = Math.fma(w[w0 + j], x[x0 + j], s);
        return s;
    }
}
