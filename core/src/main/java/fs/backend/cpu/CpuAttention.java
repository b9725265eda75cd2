package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;

import fs.backend.RowPositions;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Attention on the CPU over a {@link CpuKvCache}, split over a {@link WorkerPool}. A unit of work is a span of up to
 * {@link #SPAN_TILES} tiles of {@link AttentionKernels#QUERIES} queries of one kv head of one run (consecutive rows of
 * one sequence), taken in (row, head) order from its group of query heads; a tile short of queries repeats its last
 * one, whose output is not kept. Every tile of the span goes over a few key blocks (or value rows) before the span
 * moves on, so those stay in L1 rather than being fetched again per tile. A tile never mixes sequences: its queries
 * share the keys and values they read.
 *
 * <p>The scratch (per thread, grown to the largest call so far) and the current call's arguments live in fields, so a
 * call allocates nothing once the scratch is large enough. Not thread-safe: its backend makes one call at a time.
 */
final class CpuAttention implements WorkerPool.Task {
    /** Attention tiles per unit of attention work, which share each key block and value row while it is in L1. */
    private static final int SPAN_TILES = 8;
    /** Positions of values the tiles of a span share in L1: 64 rows of a 4L-float slice are 16 KiB at L = 16. */
    private static final int VALUE_CHUNK = 64;

    private final WorkerPool pool;
    /** Where each query's attention runs natively (the same floats, no JIT warm-up); null: the Java kernels. */
    private final NativeFloatOps nativeOps;
    /** Per thread: a tile of attention queries, their scores (then weights) and their outputs. */
    private final float[][] tileQueries;
    private final float[][] tileScores;
    private final float[][] tileOutputs;
    /** Per thread: the positions each query of a tile sees, and where its row lives in q and out. */
    private final int[][] tilePositions;
    private final long[][] tileRowOffsets;
    /** Per thread: where softmax spills its accumulators to sum the lanes. */
    private final float[][] laneScratch;

    // The arguments of the call in progress, for its units.
    private MemorySegment q;
    private MemorySegment out;
    private CpuKvCache cache;
    private RowPositions placed;
    private int layer;
    private int heads;
    private int group;
    private int scoreStride;
    /** Runs of the current call, and per run its first row, rows, tiles, spans per kv head and first unit. */
    private int runs;
    private int[] runFirstRow = new int[8];
    private int[] runRows = new int[8];
    private int[] runTiles = new int[8];
    private int[] runSpans = new int[8];
    private int[] runFirstUnit = new int[8];

    CpuAttention(WorkerPool pool, NativeFloatOps nativeOps) {
        this.pool = pool;
        this.nativeOps = nativeOps;
        int threads = pool.threads();
        tileQueries = new float[threads][0];
        tileScores = new float[threads][0];
        tileOutputs = new float[threads][0];
        tilePositions = new int[threads][0];
        tileRowOffsets = new long[threads][0];
        laneScratch = new float[threads][MatmulKernels.LANES_SCRATCH];
    }

    /**
     * The {@code heads} query heads of each of {@code placed}'s rows in {@code q} attend over {@code layer}'s keys and
     * values up to the row's position, into {@code out}. The backend has checked the arguments.
     */
    void attention(MemorySegment q, CpuKvCache cache, int layer, MemorySegment out, RowPositions placed, int heads) {
        int headDim = cache.headDim();
        int rows = placed.rows();
        if (rows == 0) return;
        int group = heads / cache.kvHeads();
        // The units of each run of one sequence's rows: its tiles' spans, for every kv head.
        int runs = 0, units = 0, mostTiles = 0;
        for (int first = 0, end; first < rows; first = end, runs++) {
            end = placed.runEnd(first);
            if (runFirstRow.length == runs) growRuns();
            int tiles = ((end - first) * group + AttentionKernels.QUERIES - 1) / AttentionKernels.QUERIES;
            int spans = (tiles + SPAN_TILES - 1) / SPAN_TILES;
            runFirstRow[runs] = first;
            runRows[runs] = end - first;
            runTiles[runs] = tiles;
            runSpans[runs] = spans;
            runFirstUnit[runs] = units;
            units += cache.kvHeads() * spans;
            mostTiles = Math.max(mostTiles, tiles);
        }
        // Scores come a whole key block at a time.
        int scoreStride = roundUp(placed.mostPositions(), CpuKvCache.KEY_BLOCK);
        int spanTiles = Math.min(SPAN_TILES, mostTiles);
        int slots = spanTiles * AttentionKernels.QUERIES;
        for (int t = 0; t < tileScores.length; t++) {
            if (tileScores[t].length < (long) slots * scoreStride) {
                long grown = Math.max((long) slots * scoreStride, 2L * tileScores[t].length);
                tileScores[t] = new float[(int) Math.min(grown, Integer.MAX_VALUE - 64)];
            }
            if (tileQueries[t].length < slots * headDim) tileQueries[t] = new float[slots * headDim];
            if (tileOutputs[t].length < slots * headDim) tileOutputs[t] = new float[slots * headDim];
            if (tilePositions[t].length < slots) tilePositions[t] = new int[slots];
            if (tileRowOffsets[t].length < slots) tileRowOffsets[t] = new long[slots];
        }
        this.q = q;
        this.out = out;
        this.cache = cache;
        this.placed = placed;
        this.layer = layer;
        this.heads = heads;
        this.group = group;
        this.scoreStride = scoreStride;
        this.runs = runs;
        // Scores and weighted values: two multiply-adds per query, position and element of a head.
        pool.run(this, units, 2L * rows * heads * placed.mostPositions() * headDim);
        this.q = null;
        this.out = null;
        this.cache = null;
        this.placed = null;
    }

    @Override
    public void run(int unit, int worker) {
        int run = Arrays.binarySearch(runFirstUnit, 0, runs, unit);
        if (run < 0) run = -run - 2; // the run whose first unit is the largest at or before this one
        int local = unit - runFirstUnit[run];
        int spansPerKvHead = runSpans[run], tiles = runTiles[run], firstRow = runFirstRow[run];
        int sequence = placed.sequence(firstRow);
        int kvHead = local / spansPerKvHead;
        int firstTile = (local % spansPerKvHead) * SPAN_TILES;
        int spanTiles = Math.min(SPAN_TILES, tiles - firstTile);
        int tileSlots = AttentionKernels.QUERIES, slots = spanTiles * tileSlots;
        int headDim = cache.headDim();
        if (nativeOps != null) {
            attendNatively(run, sequence, kvHead, firstTile * tileSlots, slots, worker);
            return;
        }
        float[] queries = tileQueries[worker], w = tileScores[worker], acc = tileOutputs[worker];
        int[] seen = tilePositions[worker];
        long[] rowOffsets = tileRowOffsets[worker];
        int queryCount = runRows[run] * group, most = 0;
        for (int i = 0; i < slots; i++) {
            int tileFirst = (firstTile + i / tileSlots) * tileSlots;
            int query = Math.min(tileFirst + i % tileSlots, queryCount - 1);
            int row = firstRow + query / group, head = kvHead * group + query % group;
            seen[i] = placed.position(row) + 1;
            most = Math.max(most, seen[i]);
            rowOffsets[i] = ((long) row * heads + head) * headDim * Float.BYTES;
            MemorySegment.copy(q, FLOAT, rowOffsets[i], queries, i * headDim, headDim);
        }
        MemorySegment keys = cache.keys()[layer], values = cache.values()[layer];
        // Scores past a query's own positions are computed with the rest of their block and never read.
        int blocks = (most + CpuKvCache.KEY_BLOCK - 1) / CpuKvCache.KEY_BLOCK;
        int b = 0;
        for (; b + 4 <= blocks; b += 4) {
            long block = cache.keyBlockOffset(sequence, kvHead, b);
            for (int t = 0; t < spanTiles; t++) {
                AttentionKernels.scores4Blocks(keys, block, queries, t * tileSlots * headDim, headDim, w, scoreStride,
                        t * tileSlots * scoreStride + b * L);
            }
        }
        for (; b < blocks; b++) {
            long block = cache.keyBlockOffset(sequence, kvHead, b);
            for (int t = 0; t < spanTiles; t++) {
                AttentionKernels.scores1Block(keys, block, queries, t * tileSlots * headDim, headDim, w, scoreStride,
                        t * tileSlots * scoreStride + b * L);
            }
        }
        float scale = (float) (1.0 / Math.sqrt(headDim));
        for (int i = 0; i < slots; i++) AttentionKernels.softmax(w, i * scoreStride, seen[i], scale, laneScratch[worker]);
        long head = cache.valueOffset(sequence, kvHead, 0), step = (long) headDim * Float.BYTES;
        int full = headDim - headDim % (4 * L);
        Arrays.fill(acc, 0, slots * headDim, 0f);
        for (int d = 0; d < full; d += 4 * L) {
            for (int from = 0; from < most; from += VALUE_CHUNK) {
                for (int t = 0; t < spanTiles; t++) {
                    int to = Math.min(from + VALUE_CHUNK, fewest(seen, t * tileSlots, tileSlots));
                    if (from >= to) continue;
                    AttentionKernels.values4Vectors(values, head, step, d, w, t * tileSlots * scoreStride, scoreStride,
                            from, to, acc, t * tileSlots * headDim, headDim);
                }
            }
        }
        for (int i = 0; i < slots; i++) {
            int query = (firstTile + i / tileSlots) * tileSlots + i % tileSlots;
            if (query >= queryCount) continue; // a repeat that fills its tile
            int a = i * headDim, fewest = fewest(seen, i - i % tileSlots, tileSlots);
            AttentionKernels.continueValues(values, head, step, 0, full, w, i * scoreStride, fewest, seen[i], acc, a);
            AttentionKernels.continueValues(values, head, step, full, headDim, w, i * scoreStride, 0, seen[i], acc, a);
            MemorySegment.copy(acc, a, out, FLOAT, rowOffsets[i], headDim);
        }
    }

    /**
     * The unit's queries from {@code first} (at most {@code count}), one native call each: per query the same
     * scores, softmax and weighted values as the tiles' Java kernels (native/cpu/float_ops.c).
     */
    private void attendNatively(int run, int sequence, int kvHead, int first, int count, int worker) {
        int headDim = cache.headDim(), queryCount = runRows[run] * group, firstRow = runFirstRow[run];
        long headBytes = (long) headDim * Float.BYTES;
        MemorySegment keys = cache.keys()[layer].asSlice(cache.keyBlockOffset(sequence, kvHead, 0));
        MemorySegment values = cache.values()[layer].asSlice(cache.valueOffset(sequence, kvHead, 0));
        float scale = (float) (1.0 / Math.sqrt(headDim));
        for (int query = first; query < Math.min(first + count, queryCount); query++) {
            int row = firstRow + query / group, head = kvHead * group + query % group;
            long offset = ((long) row * heads + head) * headBytes;
            nativeOps.attention(q.asSlice(offset, headBytes), keys, values, headDim, CpuKvCache.KEY_BLOCK,
                    placed.position(row) + 1, scale, tileScores[worker], out.asSlice(offset, headBytes));
        }
    }

    private static int fewest(int[] seen, int from, int count) {
        int fewest = Integer.MAX_VALUE;
        for (int i = from; i < from + count; i++) fewest = Math.min(fewest, seen[i]);
        return fewest;
    }

    private void growRuns() {
        int n = 2 * runFirstRow.length;
        runFirstRow = Arrays.copyOf(runFirstRow, n);
        runRows = Arrays.copyOf(runRows, n);
        runTiles = Arrays.copyOf(runTiles, n);
        runSpans = Arrays.copyOf(runSpans, n);
        runFirstUnit = Arrays.copyOf(runFirstUnit, n);
    }

    private static int roundUp(int value, int multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }
}
