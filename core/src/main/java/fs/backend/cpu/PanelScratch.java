package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.PANEL;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Per thread: where a batched matmul packs its panel of weights, grown to the current K. */
final class PanelScratch {
    /** The packed panel: element c of the panel's row j at {@code c·PANEL + j}. */
    float[] panel = new float[0];
    /** The panel's rows as floats, {@link #rowStride} apart, on their way into the panel. */
    float[] rows = new float[0];
    int rowStride;
    /** j·rowStride for j < L: a gather of one column of L rows. */
    final int[] rowGather = new int[L];
    /** bf16: the panel's rows as ints (pairs of neighbours), {@link #pairStride} apart, and j·pairStride for j < L. */
    int[] pairs = new int[0];
    int pairStride;
    final int[] pairGather = new int[L];
    /** Outputs of a tile that overhangs the batch or the matrix; only the valid part is copied out. */
    final MemorySegment edge;

    PanelScratch(Arena arena) {
        edge = arena.allocate((long) MatmulKernels.TILE_ROWS * PANEL * Float.BYTES, 64);
    }

    void fit(int k) {
        if (panel.length < k * PANEL) panel = new float[k * PANEL];
        // Odd strides keep the rows a gather reads off the same cache sets.
        rowStride = oddStride(k);
        pairStride = oddStride(k / 2);
        if (rows.length < PANEL * rowStride) rows = new float[PANEL * rowStride];
        for (int j = 0; j < L; j++) {
            rowGather[j] = j * rowStride;
            pairGather[j] = j * pairStride;
        }
    }

    /** bf16 panels pack through {@link #pairs}, which only they need. */
    void fitPairs() {
        if (pairs.length < PANEL * pairStride) pairs = new int[PANEL * pairStride];
    }

    private static int oddStride(int width) {
        return width + 1 - width % 2 + 16;
    }
}
