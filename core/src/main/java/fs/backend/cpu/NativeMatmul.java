package fs.backend.cpu;

import java.lang.foreign.MemorySegment;

/**
 * {@code out = x · wᵀ} through {@link NativeKernels} on a {@link WorkerPool}: every row of x is quantized once (a
 * downcall per row, the rows shared by the pool's threads), then each unit of {@link #UNIT_ROWS} weight rows is one
 * downcall per {@link #ROWS_PER_CALL} input rows. The kernels compute each output from its weight row and input row
 * alone, so results do not depend on the thread count, the units or the number of rows (a prompt row and the same
 * row decoded alone give the same logits). Holds the quantized input, reused from call to call; one matmul runs at
 * a time.
 *
 * <p>Inside a call the kernels take the input rows four at a time and unpack each weight block once for the four
 * (native/cpu/README.md), so {@link #ROWS_PER_CALL} only has to be a multiple of four: a unit's 16 downcalls for a
 * 128-row prompt cost well under 1% of its integer work. A weight repacked at upload ({@link Repacker}) runs on the
 * kernels of its repacked layout, which give the same floats.
 */
final class NativeMatmul implements WorkerPool.Task {
    /**
     * Weight rows per unit, as the Vector API path's: a unit of a 1024-column Q4_K matrix is 36 KiB of weights; four
     * whole groups of a repacked weight's 16 rows.
     */
    private static final int UNIT_ROWS = 64;
    /**
     * Input rows per downcall, two of the kernels' groups of four: bounds how long a critical downcall holds off a
     * safepoint in prefill.
     */
    private static final int ROWS_PER_CALL = 8;

    /**
     * What quantizing a value costs, in the pool's multiply-adds ({@link WorkerPool#SERIAL_WORK}): the Q8_0
     * quantizer's steps (a maximum per 4 values, a division per group) took 12% of ../shared/trained Q8_0's pp64 on
     * the calling thread alone (perf, 2026-12-04), about 1.3 ns a value against the x16 kernels' 0.1-0.2 ns a
     * multiply-add; a prompt's rows are shared by the threads from 2^17 / 8 values up (64 rows of K = 256).
     */
    private static final long QUANTIZE_WORK = 8;

    private final WorkerPool pool;
    private final NativeKernels kernels;
    /** Quantizes row {@code unit} of the current input. */
    private final WorkerPool.Task quantizeRow = (unit, worker) -> quantizeRow(unit);
    /** The quantized input rows, back to back; on the heap (critical downcalls may read heap arrays). */
    private MemorySegment activations = MemorySegment.ofArray(new byte[0]);

    private CpuWeight weight;
    private MemorySegment out;
    private int rows;
    private long activationRowBytes;
    private MemorySegment input;
    private NativeKernels.Activations format;
    private int k;

    NativeMatmul(WorkerPool pool, NativeKernels kernels) {
        this.pool = pool;
        this.kernels = kernels;
    }

    String isa() {
        return kernels.isa();
    }

    /** Whether the matmul of this weight runs here. */
    boolean covers(CpuWeight w) {
        return NativeKernels.covers(w.dtype());
    }

    /** {@code out[r, :] = x[r, :] · wᵀ} for {@code rows} rows of x; the caller checked the lengths. */
    void matmul(MemorySegment x, CpuWeight w, MemorySegment result, int rowCount) {
        k = (int) w.columns();
        format = NativeKernels.Activations.of(w.dtype());
        activationRowBytes = format.rowBytes(k);
        long needed = rowCount * activationRowBytes;
        if (activations.byteSize() < needed) {
            if (needed > Integer.MAX_VALUE - 64) throw new IllegalArgumentException("matmul input too big: " + needed);
            activations = MemorySegment.ofArray(new byte[(int) Math.max(needed,
                    Math.min(2 * activations.byteSize(), Integer.MAX_VALUE - 64))]);
        }
        weight = w;
        out = result;
        rows = rowCount;
        input = x;
        try {
            if (rowCount == 1) kernels.quantize(format, x, activations, k);
            else pool.run(quantizeRow, rowCount, (long) rowCount * k * QUANTIZE_WORK);
            pool.run(this, (int) ((w.rows() + UNIT_ROWS - 1) / UNIT_ROWS), w.rows() * k * rowCount);
        } finally {
            weight = null;
            out = null;
            input = null;
        }
    }

    private void quantizeRow(int r) {
        kernels.quantize(format, input.asSlice((long) r * k * Float.BYTES, (long) k * Float.BYTES),
                activations.asSlice(r * activationRowBytes, activationRowBytes), k);
    }

    @Override
    public void run(int unit, int worker) {
        int n = (int) weight.rows();
        int from = unit * UNIT_ROWS, to = Math.min(n, from + UNIT_ROWS);
        for (int r = 0; r < rows; r += ROWS_PER_CALL) {
            int count = Math.min(ROWS_PER_CALL, rows - r);
            // The first call takes the segments themselves: a decode's matmul (one call per unit) allocates nothing.
            kernels.matmul(weight, from, to, r == 0 ? activations : activations.asSlice(r * activationRowBytes),
                    count, r == 0 ? out : out.asSlice(4L * r * n), n);
        }
    }
}
