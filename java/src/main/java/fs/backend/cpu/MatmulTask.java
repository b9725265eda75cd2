package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.FLOAT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * {@code out = x · wᵀ} on a {@link WorkerPool}, in units of weight rows [64·unit, 64·unit + 64) against every input
 * row. A single row (decode) reads the weights in place: in four-row tiles where the format has them
 * ({@link TiledRows}), else a {@link RowFormat#dot} per row. A batch (prefill) packs each unit a panel at a time and
 * sweeps every input row over each panel ({@link MatmulKernels}). Holds the input and the per-thread scratch, reused
 * from call to call; one matmul runs at a time.
 */
final class MatmulTask implements WorkerPool.Task {
    /**
     * Weight rows per unit of matmul work: a multiple of {@link MatmulKernels#PANEL}. A batch packs a panel to floats
     * once and sweeps every input row over it: a panel of K = 3072 is 768 KiB, inside L2.
     */
    private static final int UNIT_ROWS = 64;
    /**
     * Floats of padding after each row of the matmul input. Rows whose byte stride is a multiple of 4 KiB (K = 1024,
     * 3072) all map to the same L1 sets, so the six rows a batched tile reads would evict each other; one extra cache
     * line per row spreads them.
     */
    private static final int ROW_PADDING = 16;
    /**
     * The most input rows that take the few-rows path (the decode steps of a scheduler's batch): each weight row is
     * decoded once and dotted with every input row while it is in L1, instead of being packed into panels, whose
     * packing and six-row tiles cost a small batch more than they save (2 streams ran at half the speed of one).
     */
    static final int FEW_ROWS = 8;
    /**
     * The same for a tiled format (bf16, f32), whose cheap decoding runs again for each input row: from four rows on,
     * packed panels measured faster (models/full bf16, 8 streams: 28.9 tok/s in panels, 21.9 in the few-rows path).
     */
    static final int FEW_TILED_ROWS = 3;

    private final WorkerPool pool;
    /** The input of the current matmul on the heap, each row laid out as the format's tiles read it. */
    private float[] input = new float[0];
    private final PanelScratch[] panels;
    /** Per thread: where the one-row tiles spill their accumulators to sum the lanes. */
    private final float[][] lanes;
    /** Per thread: one weight row dequantized for the few-rows path. */
    private final float[][] rowScratch;

    private CpuWeight weight;
    private MemorySegment out;
    private int n;
    private int k;
    /** Floats between consecutive rows of the input array. */
    private int stride;
    private int rows;
    private boolean batched;
    /** 2..FEW_ROWS rows: each weight row decoded once for all of them ({@link #fewRows}). */
    private boolean few;

    MatmulTask(WorkerPool pool, Arena arena) {
        this.pool = pool;
        panels = new PanelScratch[pool.threads()];
        for (int t = 0; t < panels.length; t++) panels[t] = new PanelScratch(arena);
        lanes = new float[pool.threads()][MatmulKernels.LANES_SCRATCH];
        rowScratch = new float[pool.threads()][0];
    }

    /** {@code out[r, :] = x[r, :] · wᵀ} for {@code rows} rows of x; the caller checked the lengths. */
    void matmul(MemorySegment x, CpuWeight w, MemorySegment result, int rowCount) {
        n = (int) w.rows();
        k = (int) w.columns();
        rows = rowCount;
        few = rows >= 2 && rows <= (w.format() instanceof TiledRows ? FEW_TILED_ROWS : FEW_ROWS);
        batched = rows >= 2 && !few;
        stride = k + ROW_PADDING;
        // A batch is padded with zero rows to whole tiles; their outputs are never written out.
        int inputRows = batched ? roundUp(rows, MatmulKernels.TILE_ROWS) : rows;
        long inputLength = (long) inputRows * stride;
        if (inputLength > Integer.MAX_VALUE - 64) throw new IllegalArgumentException("matmul input too large: " + inputLength);
        if (input.length < inputLength) input = new float[(int) Math.max(inputLength, Math.min(2L * input.length, Integer.MAX_VALUE - 64))];
        for (int r = 0; r < rows; r++) {
            long from = (long) r * k * Float.BYTES;
            if (!batched && w.format() instanceof TiledRows tiled) tiled.loadInput(x, from, input, r * stride, k);
            else MemorySegment.copy(x, FLOAT, from, input, r * stride, k);
        }
        if (batched) {
            Arrays.fill(input, rows * stride, inputRows * stride, 0f);
            for (PanelScratch p : panels) p.fit(k);
        }
        if (few && !(w.format() instanceof TiledRows)) {
            for (int t = 0; t < rowScratch.length; t++) {
                if (rowScratch[t].length < k) rowScratch[t] = new float[k];
            }
        }
        weight = w;
        out = result;
        try {
            pool.run(this, (n + UNIT_ROWS - 1) / UNIT_ROWS);
        } finally {
            weight = null;
            out = null;
        }
    }

    private static int roundUp(int value, int multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }

    @Override
    public void run(int unit, int worker) {
        int from = unit * UNIT_ROWS;
        int to = Math.min(n, from + UNIT_ROWS);
        if (few) {
            fewRows(from, to, worker);
            return;
        }
        if (!batched) {
            if (weight.format() instanceof TiledRows tiled) tiledRow(tiled, from, to, lanes[worker]);
            else rowByRow(from, to);
            return;
        }
        PanelScratch scratch = panels[worker];
        MemorySegment data = weight.data();
        long rowBytes = weight.rowBytes();
        for (int row0 = from; row0 < to; row0 += MatmulKernels.PANEL) {
            int count = Math.min(MatmulKernels.PANEL, to - row0);
            if (weight.format() instanceof PanelPacking packing) packing.pack(data, rowBytes, k, row0, count, scratch);
            else MatmulKernels.packRows(weight.format(), data, rowBytes, k, row0, count, scratch);
            panelTimesBatch(scratch, row0, count);
        }
    }

    /** Every input row against the packed panel of weight rows [row0, row0 + count). */
    private void panelTimesBatch(PanelScratch scratch, int row0, int count) {
        long oStride = 4L * n;
        int tile = MatmulKernels.TILE_ROWS;
        for (int r = 0; r < rows; r += tile) {
            if (count == MatmulKernels.PANEL && r + tile <= rows) {
                MatmulKernels.tile6(scratch.panel, k, input, r * stride, stride, out, r * oStride + 4L * row0, oStride);
                continue;
            }
            long edgeStride = 4L * MatmulKernels.PANEL;
            MatmulKernels.tile6(scratch.panel, k, input, r * stride, stride, scratch.edge, 0, edgeStride);
            for (int i = 0; i < Math.min(tile, rows - r); i++) {
                MemorySegment.copy(scratch.edge, i * edgeStride, out, (r + i) * oStride + 4L * row0, 4L * count);
            }
        }
    }

    /**
     * A tile takes its four rows from the four quarters of the unit, not four neighbours: the hardware prefetcher
     * then sees four plain ascending streams rather than four interleaved ones inside the same pages (K = 1024
     * bf16 rows are half a page), which measured ~10% more read bandwidth per thread.
     */
    private void tiledRow(TiledRows format, int from, int to, float[] scratch) {
        MemorySegment w = weight.data();
        long wStride = weight.rowBytes();
        int quarter = (to - from) / 4;
        for (int i = from; i < from + quarter; i++) {
            format.tile4(w, i * wStride, quarter * wStride, input, 0, k, out, 4L * i, 4L * quarter, scratch);
        }
        for (int i = from + 4 * quarter; i < to; i++) {
            out.set(FLOAT, 4L * i, format.tile1(w, i * wStride, input, 0, k, scratch));
        }
    }

    /**
     * Weight rows [from, to) against the 2..{@link #FEW_ROWS} input rows ({@link #FEW_TILED_ROWS} for a tiled format). A tiled format's one-row kernel runs once
     * per input row over the weight row, which stays in L1 after the first (so each output is the float that row alone
     * would get); any other format's row is dequantized once, exactly, and each output is
     * {@link MatmulKernels#laneDot} of it with the input row: the decoding, the costly part, is shared by the rows.
     */
    private void fewRows(int from, int to, int worker) {
        MemorySegment w = weight.data();
        long wStride = weight.rowBytes();
        long oStride = 4L * n;
        if (weight.format() instanceof TiledRows tiled) {
            float[] scratch = lanes[worker];
            for (int i = from; i < to; i++) {
                for (int r = 0; r < rows; r++) {
                    out.set(FLOAT, r * oStride + 4L * i, tiled.tile1(w, i * wStride, input, r * stride, k, scratch));
                }
            }
            return;
        }
        float[] row = rowScratch[worker];
        float[] scratch = lanes[worker];
        for (int i = from; i < to; i++) {
            weight.format().dequantize(w, i * wStride, k, row, 0);
            for (int r = 0; r < rows; r++) {
                out.set(FLOAT, r * oStride + 4L * i, MatmulKernels.laneDot(row, input, r * stride, k, scratch));
            }
        }
    }

    private void rowByRow(int from, int to) {
        MemorySegment w = weight.data();
        long wStride = weight.rowBytes();
        for (int i = from; i < to; i++) out.set(FLOAT, 4L * i, weight.format().dot(w, i * wStride, input, 0, k));
    }
}
