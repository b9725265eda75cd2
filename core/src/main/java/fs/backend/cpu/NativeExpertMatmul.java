package fs.backend.cpu;

import fs.backend.ExpertRouting;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The experts' matmuls of one {@code matmulExperts} call through {@link NativeKernels}, in one hand-off to the
 * {@link WorkerPool}: the calling thread quantizes every distinct input row once (the token's row for gate and up,
 * each slot's row for down) and lays the quantized rows out grouped by expert; then every unit, an (expert, block of
 * {@link #UNIT_ROWS} weight rows) pair, runs that expert's rows against its slots' rows, and the outputs go back to
 * slot order. Per expert this is the very arithmetic of {@link NativeMatmul} on the gathered rows (quantization is
 * per row, the kernels compute each output from one weight row and one activation row), so the floats are the same,
 * bit for bit, as one {@link NativeMatmul#matmul} per expert; what goes is the per-expert quantization and hand-off
 * (Qwen3-30B-A3B's layer: 24 per layer per decoded token, 384 per layer per prompt; docs/PERFORMANCE.md, 2026-12-03).
 * Experts repacked at upload run on their repacked rows, as in {@link NativeMatmul}.
 */
final class NativeExpertMatmul implements WorkerPool.Task {
    /** Weight rows per unit, as {@link NativeMatmul}'s. */
    private static final int UNIT_ROWS = 64;
    /** Activation rows per downcall, as {@link NativeMatmul}'s. */
    private static final int ROWS_PER_CALL = 8;

    private final WorkerPool pool;
    private final NativeKernels kernels;
    /** Quantized input rows, one per distinct input row (on the heap: critical downcalls may read heap arrays). */
    private MemorySegment quantized = MemorySegment.ofArray(new byte[0]);
    /** Quantized rows in grouped-slot order: expert e's slots at groupStart(e)..groupEnd(e). */
    private MemorySegment grouped = MemorySegment.ofArray(new byte[0]);
    /** Outputs in grouped-slot order, for groups of more than one slot. */
    private MemorySegment result = MemorySegment.NULL;
    private final Arena arena;

    // the current call
    private CpuWeight[] weights = new CpuWeight[0];
    /** Per unit: its expert and its block of weight rows. */
    private int[] unitExpert = new int[0];
    private int[] unitBlock = new int[0];
    private ExpertRouting routing;
    private MemorySegment out;
    private long activationRowBytes;
    private int outWidth;

    NativeExpertMatmul(WorkerPool pool, NativeKernels kernels, Arena arena) {
        this.pool = pool;
        this.kernels = kernels;
        this.arena = arena;
    }

    /**
     * {@code out[slot] = x[row(slot)] · experts[expert(slot)]ᵀ} for every slot, x holding one row per slot when
     * {@code xPerSlot}, else one per routing row; every expert weight is a native format of the same dtype and shape
     * (the caller checked shapes and lengths).
     */
    void matmul(MemorySegment x, boolean xPerSlot, CpuWeight[] experts, ExpertRouting routing, MemorySegment out) {
        CpuWeight first = experts[0];
        int k = (int) first.columns();
        outWidth = (int) first.rows();
        NativeKernels.Activations format = NativeKernels.Activations.of(first.dtype());
        activationRowBytes = format.rowBytes(k);
        int inputRows = xPerSlot ? routing.slots() : routing.rows();
        int slots = routing.slots();
        quantized = ensureHeap(quantized, inputRows * activationRowBytes);
        grouped = ensureHeap(grouped, slots * activationRowBytes);
        kernels.quantize(format, x, quantized, (long) inputRows * k);
        int blocks = (outWidth + UNIT_ROWS - 1) / UNIT_ROWS;
        int units = 0, expertCount = routing.expertCount();
        int maxUnits = blocks * Math.min(expertCount, slots);
        if (unitExpert.length < maxUnits) {
            unitExpert = new int[maxUnits];
            unitBlock = new int[maxUnits];
        }
        boolean needResult = false;
        for (int e = 0; e < expertCount; e++) {
            int start = routing.groupStart(e), end = routing.groupEnd(e);
            if (start == end) continue;
            if (end - start > 1) needResult = true;
            for (int i = start; i < end; i++) {
                int slot = routing.groupedSlot(i);
                long row = xPerSlot ? slot : slot / routing.used();
                MemorySegment.copy(quantized, row * activationRowBytes, grouped, i * activationRowBytes,
                        activationRowBytes);
            }
            for (int b = 0; b < blocks; b++) {
                unitExpert[units] = e;
                unitBlock[units] = b;
                units++;
            }
        }
        if (needResult) result = ensureNative(result, (long) slots * outWidth * Float.BYTES);
        this.weights = experts;
        this.routing = routing;
        this.out = out;
        try {
            pool.run(this, units, (long) slots * outWidth * k);
        } finally {
            this.weights = null;
            this.routing = null;
            this.out = null;
        }
        if (!needResult) return;
        long outBytes = (long) outWidth * Float.BYTES;
        for (int e = 0; e < expertCount; e++) {
            int start = routing.groupStart(e), end = routing.groupEnd(e);
            if (end - start < 2) continue;
            for (int i = start; i < end; i++) {
                MemorySegment.copy(result, i * outBytes, out, routing.groupedSlot(i) * outBytes, outBytes);
            }
        }
    }

    @Override
    public void run(int unit, int worker) {
        int e = unitExpert[unit];
        CpuWeight w = weights[e];
        int from = unitBlock[unit] * UNIT_ROWS, to = Math.min(outWidth, from + UNIT_ROWS);
        int start = routing.groupStart(e), n = routing.groupEnd(e) - start;
        if (n == 1) {
            long slot = routing.groupedSlot(start);
            kernels.matmul(w, from, to, grouped.asSlice(start * activationRowBytes), 1,
                    out.asSlice(slot * outWidth * Float.BYTES, (long) outWidth * Float.BYTES), outWidth);
            return;
        }
        for (int r = 0; r < n; r += ROWS_PER_CALL) {
            int count = Math.min(ROWS_PER_CALL, n - r);
            long g = start + r;
            kernels.matmul(w, from, to, grouped.asSlice(g * activationRowBytes), count,
                    result.asSlice(g * outWidth * Float.BYTES), outWidth);
        }
    }

    private static MemorySegment ensureHeap(MemorySegment s, long bytes) {
        if (s.byteSize() >= bytes) return s;
        if (bytes > Integer.MAX_VALUE - 64) throw new IllegalArgumentException("expert matmul input too big: " + bytes);
        return MemorySegment.ofArray(new byte[(int) Math.max(bytes, Math.min(2 * s.byteSize(), Integer.MAX_VALUE - 64))]);
    }

    private MemorySegment ensureNative(MemorySegment s, long bytes) {
        if (s.byteSize() >= bytes) return s;
        return arena.allocate(Math.max(bytes, 2 * s.byteSize()), 64);
    }
}
