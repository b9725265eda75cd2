package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.LE;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.incubator.vector.FloatVector;

/**
 * The CPU backend on the Vector API: float32 activations off-heap, weights read in place from the checkpoint's
 * memory (plain or quantized blocks) and decoded to float32 in the kernels: each weight format is one
 * {@link RowFormat}, chosen at upload ({@link RowFormats}), and {@link MatmulTask} runs the matmul over it. With
 * {@link CpuKernels} asking for native kernels, the matmuls of the formats libfscpu has run there instead
 * ({@link NativeMatmul}: activations quantized to 8 bits, integer dot products), and everything else here.
 *
 * <p>matmul and attention (and the larger element-wise ops) are split over a {@link WorkerPool}; every output is
 * computed by the same sequence of float operations whatever the thread count, so results are bitwise reproducible
 * across thread counts. They are across batch sizes too, with one exception: a one-row matmul (decode, bound by
 * memory) sums in vector lanes and a tree, in its format's order, a batched one (prefill, bound by arithmetic) in one sequential chain per output
 * (see {@link MatmulKernels}), so a prompt row and the same row decoded alone differ by rounding.
 */
public final class VectorBackend implements Backend {
    /** Attention tiles per unit of attention work, which share each key block and value row while it is in L1. */
    private static final int ATTENTION_SPAN_TILES = 8;
    /** Elements per unit of element-wise work. */
    private static final int ELEMENTWISE_UNIT = 1 << 14;

    private final Arena arena = Arena.ofShared();
    private final WorkerPool pool;
    private final Map<Rope, RopeTable> ropeTables = new HashMap<>();
    private final MatmulTask matmulTask;
    /** The native matmul of the formats it has, or null when the Vector API runs every matmul. */
    private final NativeMatmul nativeMatmul;
    private final NativeFloatOps nativeFloatOps; // null: the Java kernels
    /** Why native kernels that were asked for are not running, or null. */
    private final String nativeUnavailable;
    private final AttentionTask attentionTask = new AttentionTask();
    private final SiluMulTask siluMulTask = new SiluMulTask();
    /** Per thread: a tile of attention queries, their scores (then weights) and their outputs. */
    private final float[][] attentionQueries;
    private final float[][] attentionScores;
    private final float[][] attentionOutputs;
    /** Per thread: the positions each query of a tile sees, and where its row lives in q and out. */
    private final int[][] attentionPositions;
    private final long[][] attentionRowOffsets;
    /** Per thread: where kernels spill their accumulators to sum the lanes. */
    private final float[][] laneScratch;
    /** A weight row decoded to floats: rmsNorm's gamma, an embedding. */
    private float[] decodedRow = new float[0];
    private boolean closed;

    /**
     * A backend that runs its ops on {@code threads} threads (the calling thread included), with the matmul
     * kernels the system properties and the environment ask for ({@link CpuKernels#fromEnvironment}).
     */
    public VectorBackend(int threads) {
        this(threads, CpuKernels.fromEnvironment());
    }

    /** A backend that runs its ops on {@code threads} threads, its matmuls on {@code kernels}. */
    public VectorBackend(int threads, CpuKernels kernels) {
        pool = new WorkerPool(threads);
        matmulTask = new MatmulTask(pool, arena);
        nativeMatmul = kernels.nativeKernels() == null ? null : new NativeMatmul(pool, kernels.nativeKernels());
        nativeFloatOps = kernels.nativeKernels() == null ? null : kernels.nativeKernels().floatOps();
        siluMulTask.nativeOps = nativeFloatOps;
        nativeUnavailable = kernels.unavailable();
        attentionQueries = new float[threads][0];
        attentionScores = new float[threads][0];
        attentionOutputs = new float[threads][0];
        attentionPositions = new int[threads][0];
        attentionRowOffsets = new long[threads][0];
        laneScratch = new float[threads][MatmulKernels.LANES_SCRATCH];
    }

    @Override
    public String description() {
        String threads = pool.threads() + (pool.threads() == 1 ? " thread" : " threads");
        if (nativeMatmul != null) {
            return "cpu (native " + nativeMatmul.isa() + " int8 matmul, Vector API " + F.vectorBitSize() + "-bit, "
                    + threads + ")";
        }
        return "cpu (Vector API, " + threads + ", " + F.vectorBitSize() + "-bit"
                + (nativeUnavailable == null ? "" : "; " + nativeUnavailable) + ")";
    }

    /** Every format fs reads ({@link fs.format.ReferenceDequantizer#decodes}) has a row format here. */
    @Override
    public boolean supports(DType dtype) {
        return RowFormats.of(dtype).isPresent();
    }

    @Override
    public Weight upload(Tensor tensor) {
        checkOpen();
        RowFormat format = RowFormats.of(tensor.dtype()).orElseThrow(() -> new FsException("tensor " + tensor.name()
                + " is stored as " + tensor.dtype() + ", which the cpu backend does not read (it reads "
                + supported() + ")"));
        if (tensor.rank() != 1 && tensor.rank() != 2) {
            throw new FsException("tensor " + tensor.name() + " has rank " + tensor.rank() + "; weights are rank 1 or 2");
        }
        long needed;
        try {
            needed = tensor.byteSize();
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new FsException("tensor " + tensor.name() + " has a shape " + tensor.dtype()
                    + Arrays.toString(tensor.shape()) + " whose rows are not whole blocks or too large");
        }
        if (tensor.data().byteSize() != needed) {
            throw new FsException("tensor " + tensor.name() + " holds " + tensor.data().byteSize() + " bytes, its shape "
                    + tensor.dtype() + Arrays.toString(tensor.shape()) + " needs " + needed);
        }
        if (tensor.columns() > Integer.MAX_VALUE || tensor.rows() > Integer.MAX_VALUE) {
            throw new FsException("tensor " + tensor.name() + " is too large: " + tensor);
        }
        return new CpuWeight(tensor.name(), tensor.dtype(), tensor.rows(), tensor.columns(), tensor.data(), format);
    }

    private static List<DType> supported() {
        return Arrays.stream(DType.values()).filter(t -> RowFormats.of(t).isPresent()).toList();
    }

    @Override
    public Buffer allocate(long length) {
        checkOpen();
        if (length < 0) throw new IllegalArgumentException("negative buffer length " + length);
        return new CpuBuffer(this, arena.allocate(Math.max(1, length) * Float.BYTES, 64), length);
    }

    @Override
    public KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim) {
        checkOpen();
        if (layers <= 0 || sequences <= 0 || contextLength <= 0 || kvHeads <= 0 || headDim <= 0) {
            throw new IllegalArgumentException("bad kv cache shape: layers " + layers + ", sequences " + sequences
                    + ", context " + contextLength + ", kv heads " + kvHeads + ", head dim " + headDim);
        }
        long valueBytes = (long) sequences * contextLength * kvHeads * headDim * Float.BYTES;
        long keyBytes = CpuKvCache.keyBytes(sequences, contextLength, kvHeads, headDim);
        MemorySegment[] keys = new MemorySegment[layers];
        MemorySegment[] values = new MemorySegment[layers];
        for (int l = 0; l < layers; l++) {
            keys[l] = LazyZeroMemory.allocate(keyBytes, arena);
            values[l] = LazyZeroMemory.allocate(valueBytes, arena);
        }
        return new CpuKvCache(this, layers, sequences, contextLength, kvHeads, headDim, keys, values);
    }

    @Override
    public void embed(Weight table, int[] tokens, Buffer out) {
        CpuWeight t = weight(table);
        MemorySegment o = segment(out);
        int width = (int) t.columns();
        requireLength(out, (long) tokens.length * width, "embed output");
        for (int r = 0; r < tokens.length; r++) {
            int token = tokens[r];
            if (token < 0 || token >= t.rows()) {
                throw new FsException("token id " + token + " is outside the vocabulary of " + t.name() + " (0.."
                        + (t.rows() - 1) + ")");
            }
            widenRow(t, token, o, (long) r * width * Float.BYTES);
        }
    }

    /** Decodes row {@code row} of a weight to float32 at {@code dst + offset}. */
    private void widenRow(CpuWeight w, long row, MemorySegment dst, long offset) {
        int k = (int) w.columns();
        float[] values = decodeRow(w, row);
        MemorySegment.copy(values, 0, dst, FLOAT, offset, k);
    }

    /** Row {@code row} of a weight as floats, in {@link #decodedRow}. */
    private float[] decodeRow(CpuWeight w, long row) {
        int k = (int) w.columns();
        if (decodedRow.length < k) decodedRow = new float[k];
        w.format().dequantize(w.data(), row * w.rowBytes(), k, decodedRow, 0);
        return decodedRow;
    }

    @Override
    public void rmsNorm(Buffer x, Weight gammaWeight, Buffer out, int rows, float eps) {
        CpuWeight g = weight(gammaWeight);
        MemorySegment xs = segment(x), os = segment(out);
        int width = (int) g.columns();
        requireLength(x, (long) rows * width, "rmsNorm input");
        requireLength(out, (long) rows * width, "rmsNorm output");
        float[] gm = decodeRow(g, 0);
        if (nativeFloatOps != null) {
            nativeFloatOps.rmsNorm(xs, MemorySegment.ofArray(gm), os, rows, width, eps);
            return;
        }
        int full = width - width % L;
        for (int r = 0; r < rows; r++) {
            long base = (long) r * width * Float.BYTES;
            FloatVector acc = FloatVector.zero(F);
            for (int i = 0; i < full; i += L) {
                FloatVector v = FloatVector.fromMemorySegment(F, xs, base + 4L * i, LE);
                acc = v.fma(v, acc);
            }
            acc.intoArray(laneScratch[0], 0);
            float sumSquares = MatmulKernels.sumLanes(laneScratch[0], 0);
            for (int i = full; i < width; i++) {
                float v = xs.get(FLOAT, base + 4L * i);
                sumSquares = Math.fma(v, v, sumSquares);
            }
            float scale = (float) (1.0 / Math.sqrt(sumSquares / width + eps));
            for (int i = 0; i < full; i += L) {
                FloatVector v = FloatVector.fromMemorySegment(F, xs, base + 4L * i, LE);
                v.mul(scale).mul(FloatVector.fromArray(F, gm, i)).intoMemorySegment(os, base + 4L * i, LE);
            }
            for (int i = full; i < width; i++) {
                os.set(FLOAT, base + 4L * i, xs.get(FLOAT, base + 4L * i) * scale * gm[i]);
            }
        }
    }

    @Override
    public void matmul(Buffer x, Weight w, Buffer out, int rows) {
        CpuWeight weight = weight(w);
        MemorySegment xs = segment(x), os = segment(out);
        requireLength(x, rows * weight.columns(), "matmul input");
        requireLength(out, rows * weight.rows(), "matmul output");
        if (rows <= 0) return;
        if (nativeMatmul != null && nativeMatmul.covers(weight)) nativeMatmul.matmul(xs, weight, os, rows);
        else matmulTask.matmul(xs, weight, os, rows);
    }

    private static int roundUp(int value, int multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }

    @Override
    public void rope(Buffer x, RowPositions placed, int heads, Rope rope) {
        MemorySegment xs = segment(x);
        int headDim = rope.headDim();
        int rows = placed.rows();
        requireLength(x, (long) rows * heads * headDim, "rope input");
        RopeTable table = ropeTables.computeIfAbsent(rope, RopeTable::new);
        table.ensure(placed.mostPositions());
        float[] cos = table.cos(), sin = table.sin();
        int half = headDim / 2;
        int full = half - half % L;
        for (int r = 0; r < rows; r++) {
            int angles = placed.position(r) * half;
            if (nativeFloatOps != null) {
                long row = (long) r * heads * headDim * Float.BYTES;
                nativeFloatOps.rope(xs.asSlice(row, (long) heads * headDim * Float.BYTES), heads, headDim, cos, sin,
                        angles);
                continue;
            }
            for (int h = 0; h < heads; h++) {
                long lo = ((long) r * heads + h) * headDim * Float.BYTES;
                long hi = lo + (long) half * Float.BYTES;
                for (int i = 0; i < full; i += L) {
                    FloatVector x1 = FloatVector.fromMemorySegment(F, xs, lo + 4L * i, LE);
                    FloatVector x2 = FloatVector.fromMemorySegment(F, xs, hi + 4L * i, LE);
                    FloatVector c = FloatVector.fromArray(F, cos, angles + i);
                    FloatVector s = FloatVector.fromArray(F, sin, angles + i);
                    x1.mul(c).sub(x2.mul(s)).intoMemorySegment(xs, lo + 4L * i, LE);
                    x2.mul(c).add(x1.mul(s)).intoMemorySegment(xs, hi + 4L * i, LE);
                }
                for (int i = full; i < half; i++) {
                    float x1 = xs.get(FLOAT, lo + 4L * i), x2 = xs.get(FLOAT, hi + 4L * i);
                    float c = cos[angles + i], s = sin[angles + i];
                    xs.set(FLOAT, lo + 4L * i, x1 * c - x2 * s);
                    xs.set(FLOAT, hi + 4L * i, x2 * c + x1 * s);
                }
            }
        }
    }

    @Override
    public void storeKv(KvCache kvCache, int layer, Buffer k, Buffer v, RowPositions placed) {
        CpuKvCache cache = cache(kvCache);
        MemorySegment ks = segment(k), vs = segment(v);
        int kvHeads = cache.kvHeads(), headDim = cache.headDim();
        int rows = placed.rows();
        requireLength(k, (long) rows * kvHeads * headDim, "storeKv keys");
        requireLength(v, (long) rows * kvHeads * headDim, "storeKv values");
        checkPositions(cache, layer, placed);
        long headBytes = (long) headDim * Float.BYTES;
        MemorySegment keys = cache.keys()[layer];
        long dimensionStride = (long) CpuKvCache.KEY_BLOCK * Float.BYTES;
        for (int r = 0; r < rows; r++) {
            int position = placed.position(r), sequence = placed.sequence(r);
            for (int h = 0; h < kvHeads; h++) {
                long src = ((long) r * kvHeads + h) * headBytes;
                MemorySegment.copy(vs, src, cache.values()[layer], cache.valueOffset(sequence, h, position), headBytes);
                long dst = cache.keyBlockOffset(sequence, h, position / CpuKvCache.KEY_BLOCK)
                        + (long) (position % CpuKvCache.KEY_BLOCK) * Float.BYTES;
                for (int d = 0; d < headDim; d++) keys.set(FLOAT, dst + d * dimensionStride, ks.get(FLOAT, src + 4L * d));
            }
        }
    }

    private static void checkPositions(CpuKvCache cache, int layer, RowPositions placed) {
        if (layer < 0 || layer >= cache.layers()) {
            throw new IllegalArgumentException("layer " + layer + " outside 0.." + (cache.layers() - 1));
        }
        if (placed.mostPositions() > cache.contextLength()) {
            throw new IllegalArgumentException("position " + (placed.mostPositions() - 1)
                    + " outside the kv cache's context of " + cache.contextLength());
        }
        if (placed.mostSequences() > cache.sequences()) {
            throw new IllegalArgumentException("sequence " + (placed.mostSequences() - 1)
                    + " outside the kv cache's " + cache.sequences() + " sequences");
        }
    }

    @Override
    public void attention(Buffer q, KvCache kvCache, int layer, Buffer out, RowPositions placed, int heads) {
        CpuKvCache cache = cache(kvCache);
        int headDim = cache.headDim();
        int rows = placed.rows();
        requireLength(q, (long) rows * heads * headDim, "attention queries");
        requireLength(out, (long) rows * heads * headDim, "attention output");
        checkPositions(cache, layer, placed);
        if (heads <= 0 || heads % cache.kvHeads() != 0) {
            throw new IllegalArgumentException(heads + " query heads cannot share " + cache.kvHeads() + " kv heads");
        }
        if (rows == 0) return;
        int group = heads / cache.kvHeads();
        AttentionTask task = attentionTask;
        // The units of each run of one sequence's rows: its tiles' spans, for every kv head.
        int runs = 0, units = 0, mostTiles = 0;
        for (int first = 0, end; first < rows; first = end, runs++) {
            end = placed.runEnd(first);
            if (task.runFirstRow.length == runs) task.growRuns();
            int tiles = ((end - first) * group + AttentionKernels.QUERIES - 1) / AttentionKernels.QUERIES;
            int spans = (tiles + ATTENTION_SPAN_TILES - 1) / ATTENTION_SPAN_TILES;
            task.runFirstRow[runs] = first;
            task.runRows[runs] = end - first;
            task.runTiles[runs] = tiles;
            task.runSpans[runs] = spans;
            task.runFirstUnit[runs] = units;
            units += cache.kvHeads() * spans;
            mostTiles = Math.max(mostTiles, tiles);
        }
        // Scores come a whole key block at a time.
        int scoreStride = roundUp(placed.mostPositions(), CpuKvCache.KEY_BLOCK);
        int spanTiles = Math.min(ATTENTION_SPAN_TILES, mostTiles);
        int slots = spanTiles * AttentionKernels.QUERIES;
        for (int t = 0; t < attentionScores.length; t++) {
            if (attentionScores[t].length < (long) slots * scoreStride) {
                long grown = Math.max((long) slots * scoreStride, 2L * attentionScores[t].length);
                attentionScores[t] = new float[(int) Math.min(grown, Integer.MAX_VALUE - 64)];
            }
            if (attentionQueries[t].length < slots * headDim) attentionQueries[t] = new float[slots * headDim];
            if (attentionOutputs[t].length < slots * headDim) attentionOutputs[t] = new float[slots * headDim];
            if (attentionPositions[t].length < slots) attentionPositions[t] = new int[slots];
            if (attentionRowOffsets[t].length < slots) attentionRowOffsets[t] = new long[slots];
        }
        task.q = segment(q);
        task.out = segment(out);
        task.cache = cache;
        task.placed = placed;
        task.layer = layer;
        task.heads = heads;
        task.group = group;
        task.scoreStride = scoreStride;
        task.runs = runs;
        // Scores and weighted values: two multiply-adds per query, position and element of a head.
        pool.run(task, units, 2L * rows * heads * placed.mostPositions() * headDim);
        task.q = null;
        task.out = null;
        task.cache = null;
        task.placed = null;
    }

    /**
     * A unit of attention: a span of up to {@link #ATTENTION_SPAN_TILES} tiles of {@link AttentionKernels#QUERIES}
     * queries of one kv head of one run (consecutive rows of one sequence), taken in (row, head) order from its group
     * of query heads; a tile short of queries repeats its last one, whose output is not kept. Every tile of the span
     * goes over a few key blocks (or value rows) before the span moves on, so those stay in L1 rather than being
     * fetched again per tile. A tile never mixes sequences: its queries share the keys and values they read.
     */
    private final class AttentionTask implements WorkerPool.Task {
        /** Positions of values the tiles of a span share in L1: 64 rows of a 4L-float slice are 16 KiB at L = 16. */
        private static final int VALUE_CHUNK = 64;

        MemorySegment q;
        MemorySegment out;
        CpuKvCache cache;
        RowPositions placed;
        int layer;
        int heads;
        int group;
        int scoreStride;
        /** Runs of the current call, and per run its first row, rows, tiles, spans per kv head and first unit. */
        int runs;
        int[] runFirstRow = new int[8];
        int[] runRows = new int[8];
        int[] runTiles = new int[8];
        int[] runSpans = new int[8];
        int[] runFirstUnit = new int[8];

        void growRuns() {
            int n = 2 * runFirstRow.length;
            runFirstRow = Arrays.copyOf(runFirstRow, n);
            runRows = Arrays.copyOf(runRows, n);
            runTiles = Arrays.copyOf(runTiles, n);
            runSpans = Arrays.copyOf(runSpans, n);
            runFirstUnit = Arrays.copyOf(runFirstUnit, n);
        }

        @Override
        public void run(int unit, int worker) {
            int run = Arrays.binarySearch(runFirstUnit, 0, runs, unit);
            if (run < 0) run = -run - 2; // the run whose first unit is the largest at or before this one
            int local = unit - runFirstUnit[run];
            int spansPerKvHead = runSpans[run], tiles = runTiles[run], firstRow = runFirstRow[run];
            int sequence = placed.sequence(firstRow);
            int kvHead = local / spansPerKvHead;
            int firstTile = (local % spansPerKvHead) * ATTENTION_SPAN_TILES;
            int spanTiles = Math.min(ATTENTION_SPAN_TILES, tiles - firstTile);
            int tileSlots = AttentionKernels.QUERIES, slots = spanTiles * tileSlots;
            int headDim = cache.headDim();
            float[] queries = attentionQueries[worker], w = attentionScores[worker], acc = attentionOutputs[worker];
            int[] seen = attentionPositions[worker];
            long[] rowOffsets = attentionRowOffsets[worker];
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

        private static int fewest(int[] seen, int from, int count) {
            int fewest = Integer.MAX_VALUE;
            for (int i = from; i < from + count; i++) fewest = Math.min(fewest, seen[i]);
            return fewest;
        }
    }

    @Override
    public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
        requireLength(gate, length, "siluMul gate");
        requireLength(up, length, "siluMul up");
        requireLength(out, length, "siluMul output");
        SiluMulTask task = siluMulTask;
        task.gate = segment(gate);
        task.up = segment(up);
        task.out = segment(out);
        task.length = length;
        pool.run(task, (int) ((length + ELEMENTWISE_UNIT - 1) / ELEMENTWISE_UNIT));
        task.gate = null;
        task.up = null;
        task.out = null;
    }

    private static final class SiluMulTask implements WorkerPool.Task {
        NativeFloatOps nativeOps; // null: the Java kernel
        MemorySegment gate;
        MemorySegment up;
        MemorySegment out;
        long length;

        @Override
        public void run(int unit, int worker) {
            long from = (long) unit * ELEMENTWISE_UNIT;
            long to = Math.min(length, from + ELEMENTWISE_UNIT);
            if (nativeOps != null) {
                long offset = 4 * from, bytes = 4 * (to - from);
                nativeOps.siluMul(gate.asSlice(offset, bytes), up.asSlice(offset, bytes), out.asSlice(offset, bytes),
                        to - from);
                return;
            }
            // Units are whole vectors (ELEMENTWISE_UNIT is a multiple of L), so an element is in the vector or the
            // scalar part by its index alone; both compute the same operations.
            long i = from;
            for (; i + L <= to; i += L) {
                FloatVector g = FloatVector.fromMemorySegment(F, gate, 4 * i, LE);
                FloatVector e = FastExp.exp(g.neg());
                g.div(e.add(1f)).mul(FloatVector.fromMemorySegment(F, up, 4 * i, LE)).intoMemorySegment(out, 4 * i, LE);
            }
            for (; i < to; i++) {
                float g = gate.getAtIndex(FLOAT, i);
                out.setAtIndex(FLOAT, i, g / (FastExp.exp(-g) + 1f) * up.getAtIndex(FLOAT, i));
            }
        }
    }

    @Override
    public void add(Buffer x, Buffer y, long length) {
        MemorySegment xs = segment(x), ys = segment(y);
        requireLength(x, length, "add target");
        requireLength(y, length, "add source");
        if (nativeFloatOps != null) {
            nativeFloatOps.add(xs, ys, length);
            return;
        }
        long full = length - length % L;
        for (long i = 0; i < full; i += L) {
            FloatVector.fromMemorySegment(F, xs, 4 * i, LE).add(FloatVector.fromMemorySegment(F, ys, 4 * i, LE))
                    .intoMemorySegment(xs, 4 * i, LE);
        }
        for (long i = full; i < length; i++) xs.setAtIndex(FLOAT, i, xs.getAtIndex(FLOAT, i) + ys.getAtIndex(FLOAT, i));
    }

    @Override
    public void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length) {
        MemorySegment s = segment(src), d = segment(dst);
        requireRange(src, srcOffset, length, "copy source");
        requireRange(dst, dstOffset, length, "copy destination");
        MemorySegment.copy(s, srcOffset * Float.BYTES, d, dstOffset * Float.BYTES, length * Float.BYTES);
    }

    @Override
    public void read(Buffer src, long offset, float[] dst) {
        MemorySegment s = segment(src);
        requireRange(src, offset, dst.length, "read source");
        MemorySegment.copy(s, FLOAT, offset * Float.BYTES, dst, 0, dst.length);
    }

    @Override
    public int argmax(Buffer x, long offset, int length) {
        MemorySegment s = segment(x);
        requireRange(x, offset, length, "argmax input");
        if (length <= 0) throw new IllegalArgumentException("argmax of no elements");
        int best = 0;
        float bestValue = s.getAtIndex(FLOAT, offset);
        for (int i = 1; i < length; i++) {
            float v = s.getAtIndex(FLOAT, offset + i);
            if (v > bestValue) {
                bestValue = v;
                best = i;
            }
        }
        return best;
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        pool.close();
        ropeTables.clear();
        arena.close();
    }

    private void checkOpen() {
        if (closed) throw new IllegalStateException("the backend is closed");
    }

    private MemorySegment segment(Buffer buffer) {
        checkOpen();
        if (!(buffer instanceof CpuBuffer b) || b.owner() != this) {
            throw new IllegalArgumentException("buffer does not belong to this backend");
        }
        return b.segment();
    }

    private CpuWeight weight(Weight weight) {
        checkOpen();
        if (!(weight instanceof CpuWeight w)) throw new IllegalArgumentException("weight was not uploaded to a cpu backend");
        return w;
    }

    private CpuKvCache cache(KvCache cache) {
        checkOpen();
        if (!(cache instanceof CpuKvCache c) || c.owner() != this) {
            throw new IllegalArgumentException("kv cache does not belong to this backend");
        }
        return c;
    }

    private static void requireLength(Buffer buffer, long length, String what) {
        if (length < 0 || buffer.length() < length) {
            throw new IllegalArgumentException(what + " needs " + length + " elements, the buffer has " + buffer.length());
        }
    }

    private static void requireRange(Buffer buffer, long offset, long length, String what) {
        if (offset < 0 || length < 0 || offset + length > buffer.length()) {
            throw new IllegalArgumentException(what + ": elements " + offset + ".." + (offset + length)
                    + " outside a buffer of " + buffer.length());
        }
    }
}
