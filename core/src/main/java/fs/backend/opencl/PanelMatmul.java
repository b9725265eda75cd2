package fs.backend.opencl;

import fs.backend.opencl.OpenClBackend.ClBuffer;
import fs.backend.opencl.OpenClBackend.ClWeight;
import java.lang.foreign.MemorySegment;
import java.util.function.LongFunction;

/**
 * A block-format weight's prefill matmul, a panel at a time: prefill reuses each weight over many rows, so the weight's
 * rows are dequantized a panel at a time into scratch and weights.cl's float kernel multiplies each panel into its
 * columns of out. The panel keeps a float copy of the weight from ever being made, and each panel is read while it is
 * still in cache.
 */
final class PanelMatmul {
    /**
     * Floats of the scratch one panel of weight rows is dequantized into (4 MiB), for weights.cl's float kernel to
     * read: small enough to stay in a CPU's or a GPU's cache between being written and read, large enough that a
     * panel's launch (1024 rows of 1024) keeps every core busy.
     */
    private static final int PANEL_FLOATS = 1 << 20;

    private final MemorySegment queue;
    private final Launcher launcher;
    /** Allocates a device buffer of the given length in floats. */
    private final LongFunction<ClBuffer> allocate;
    /** The panel scratch, allocated on first use and grown when a weight's rows are longer than it. */
    private ClBuffer panel;

    PanelMatmul(MemorySegment queue, Launcher launcher, LongFunction<ClBuffer> allocate) {
        this.queue = queue;
        this.launcher = launcher;
        this.allocate = allocate;
    }

    /** {@code out[rows × n] = in[rows × k] · weightᵀ}, the weight's blocks dequantized by {@code blocks}. */
    void run(BlockKernels blocks, ClKernel floatRows, ClBuffer in, ClWeight weight, ClBuffer out, int rows, int k,
            int n) {
        int panelRows = Math.max(1, PANEL_FLOATS / k);
        if (panelRows >= KernelConstants.TILE) panelRows -= panelRows % KernelConstants.TILE; // whole GPU tiles
        ClBuffer scratch = panel((long) panelRows * k);
        for (int first = 0; first < n; first += panelRows) {
            int count = Math.min(panelRows, n - first);
            blocks.dequantize(queue, weight, k, first, count, scratch);
            launcher.matmulRows(floatRows, in, scratch, out, rows, k, count, first, n);
        }
    }

    /** The panel scratch, at least {@code length} floats. */
    private ClBuffer panel(long length) {
        if (panel == null || panel.length() < length) panel = allocate.apply(Math.max(length, PANEL_FLOATS));
        return panel;
    }
}
