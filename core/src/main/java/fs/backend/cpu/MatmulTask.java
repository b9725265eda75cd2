package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.FLOAT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * {@code out = x · wᵀ} on a {@link WorkerPool}, in units of weight rows [64·unit, 64·unit + 64) against every input
 * row. A single row (decode) reads the weights in place: in four-row tiles where the format has them
 * ({@link TiledRows}), else a {@link RowFormat#dot} per row. A few rows (a scheduler's decode step, one per stream)
 * take each pair of weight rows once for all of them, in tiles of two weight rows by up to four input rows (bf16:
 * eight; {@link InPlaceRowTiles}, {@link DecodedRowTiles}). A batch (prefill) packs each unit a panel at a time and
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
     * The most input rows that take the few-rows path (the decode steps of a scheduler's batch): each pair of weight
     * rows is read once for all of them by tiles of input rows ({@link #fewRows}), instead of being packed
     * into panels, whose packing and six-row tiles cost a small batch more than they save.
     */
    static final int FEW_ROWS = 8;

    private final WorkerPool pool;
    /** The input of the current matmul on the heap, each row laid out as the format's tiles read it. */
    private float[] input = new float[0];
    private final PanelScratch[] panels;
    /** Per thread: where the tiles spill their accumulators to sum the lanes. */
    private final float[][] lanes;
    /** Per thread: two weight rows decoded for the few-rows path, {@link #decodedStride} apart. */
    private final float[][] decoded;
    private int decodedStride;

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
        lanes = new float[pool.threads()][Math.max(MatmulKernels.LANES_SCRATCH, DecodedRowTiles.LANES_SCRATCH)];
        decoded = new float[pool.threads()][0];
    }

    /** {@code out[r, :] = x[r, :] · wᵀ} for {@code rows} rows of x; the caller checked the lengths. */
    void matmul(MemorySegment x, CpuWeight w, MemorySegment result, int rowCount) {
        n = (int) w.rows();
        k = (int) w.columns();
        rows = rowCount;
        few = rows >= 2 && rows <= FEW_ROWS;
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
        if (few) {
            decodedStride = stride;
            for (int t = 0; t < decoded.length; t++) {
                if (decoded[t].length < 2 * stride) decoded[t] = new float[2 * stride];
            }
        }
        weight = w;
        out = result;
        try {
            pool.run(this, (n + UNIT_ROWS - 1) / UNIT_ROWS, (long) n * k * rows);
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
            else rowByRow(from, to, lanes[worker]);
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
     * Weight rows [from, to) against the 2..{@link #FEW_ROWS} input rows, in tiles of a pair of weight rows by four,
     * two and one input rows (bf16 also by eight). A format with {@link InPlaceRowTiles} (bf16) reads the pair in place; any other has it
     * decoded once (exactly; a tiled format's in its tiles' layout) into L1 for {@link DecodedRowTiles}. Each output
     * is the float its input row alone gets from a tiled format ({@link TiledRows#tile1}), and from any other format
     * the float {@link MatmulKernels#laneDot} gives for the dequantized weight row. In a unit of an odd number of weight
     * rows one row is paired with itself and its outputs written twice.
     */
    private void fewRows(int from, int to, int worker) {
        MemorySegment w = weight.data();
        long wStride = weight.rowBytes();
        long oStride = 4L * n;
        RowFormat format = weight.format();
        TiledRows tiled = format instanceof TiledRows t ? t : null;
        int full = tiled != null ? tiled.tileVectorPart(k) : MatmulKernels.vectorPart(k, MatmulKernels.L);
        float[] rowPair = decoded[worker], scratch = lanes[worker];
        if (format instanceof InPlaceRowTiles inPlace) {
            // The pairs take their rows from the two halves of the unit: two plain ascending streams for the
            // prefetcher, as the one-row tiles take theirs from its quarters.
            int half = (to - from + 1) / 2;
            for (int i = from; i < from + half; i++) {
                int second = Math.min(i + half, to - 1);
                long o0 = 4L * i, o1 = 4L * second;
                int r = 0;
                for (int tile; r < rows; r += tile) {
                    tile = rows - r >= 8 ? 8 : rows - r >= 4 ? 4 : rows - r >= 2 ? 2 : 1;
                    inPlace.tile2(w, i * wStride, second * wStride, input, r * stride, stride, tile, k, scratch, out,
                            o0 + r * oStride, o1 + r * oStride, oStride);
                }
            }
            return;
        }
        int w1 = decodedStride;
        for (int i = from; i < to; i += 2) {
            int second = Math.min(i + 1, to - 1);
            // One call site per decoder, in a loop: C2 inlines the format's decoder into this method, and two
            // copies of a K-quant's pushed it past its node budget, which boxed the vectors of the helpers it then
            // could not inline (57 MB allocated per Q4_K step of FewRowsMatmulBench, 6x slower).
            for (int p = 0; p < 2; p++) {
                long rowOffset = (p == 0 ? i : second) * wStride;
                if (tiled != null) tiled.decodeAsLoaded(w, rowOffset, k, rowPair, p * w1);
                else format.dequantize(w, rowOffset, k, rowPair, p * w1);
            }
            long o0 = 4L * i, o1 = 4L * second;
            int r = 0;
            for (; r + 4 <= rows; r += 4) {
                DecodedRowTiles.tile2x4(rowPair, 0, w1, input, r * stride, stride, full, k, scratch, out,
                        o0 + r * oStride, o1 + r * oStride, oStride);
            }
            if (rows - r >= 2) {
                DecodedRowTiles.tile2x2(rowPair, 0, w1, input, r * stride, stride, full, k, scratch, out,
                        o0 + r * oStride, o1 + r * oStride, oStride);
                r += 2;
            }
            if (r < rows) {
                DecodedRowTiles.tile2x1(rowPair, 0, w1, input, r * stride, full, k, scratch, out,
                        o0 + r * oStride, o1 + r * oStride);
            }
        }
    }

    private void rowByRow(int from, int to, float[] scratch) {
        MemorySegment w = weight.data();
        long wStride = weight.rowBytes();
        for (int i = from; i < to; i++) {
            out.set(FLOAT, 4L * i, weight.format().dot(w, i * wStride, input, 0, k, scratch));
        }
    }
}
