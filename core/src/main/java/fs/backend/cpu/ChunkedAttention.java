package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;

import fs.backend.KvCacheType;
import fs.backend.RowPositions;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;

/**
 * Attention over a {@link CpuKvCache} of f16, bf16 or q8_0 rows (or f32 mixed with one of those), read in its stored
 * type: flash attention's one pass over the cache, in chunks of {@link #CHUNK} positions. A chunk gives each query of
 * a tile its partial result: the largest score m, the sum l of e^(s − m) over the chunk's positions it sees, and o,
 * those weights times the values. A query's chunks are folded in position order by an online softmax (M, L, O),
 * and its output is O / L.
 *
 * <p>The chunks are fixed stretches of positions, 0..CHUNK−1, CHUNK..2·CHUNK−1, …, and a chunk's partial depends
 * only on its query and positions; the fold is always the same sequence of operations. So a query's output does not
 * depend on its batch, its tile, or which worker computed which chunk, and the work may be split either way: by
 * chunks of a tile when the tiles are few (a decoding row: its kv heads alone would leave workers idle at depth), or
 * by whole tiles, each folding its chunks as it goes, when they are many (a prompt).
 *
 * <p>A tile is up to {@link #TILE} queries of one kv head of one run (consecutive rows of one sequence), taken in
 * (row, head) order: every key block and value row a chunk reads, dequantized once, serves all of them. The chunk's
 * arithmetic runs natively (native/cpu/float_ops.c's fs_attention_chunk) or in Java here; both are held to the
 * float64 attention by the tests, not to each other. Not thread-safe: its backend makes one call at a time.
 */
final class ChunkedAttention implements WorkerPool.Task {
    /** Positions per chunk: one partial per query per chunk. */
    static final int CHUNK = 256;
    /** Queries per tile. */
    static final int TILE = 8;
    /** The largest head the native kernel's stack rows hold. */
    static final int MOST_HEAD_DIM = 512;

    private final WorkerPool pool;
    private final NativeFloatOps nativeOps;
    private final WorkerPool.Task folding = this::foldPartials;

    /** Per thread: the tile's queries, what each sees, its chunk's scores, a key or value row and its raw bits. */
    private final float[][] queries, scores, row;
    private final int[][] seen;
    private final short[][] bits;
    /** Per thread: a block of keys as floats, dimension-major. */
    private final float[][] keyBlocks;
    private final byte[][] bytes;
    /** Per thread: a chunk's partials (m, l, o) and the fold's state (M, L, O) of a tile's queries. */
    private final float[][] chunkM, chunkL, chunkO, foldM, foldL, foldO;

    // The call in progress, for its units.
    private MemorySegment q, out;
    private CpuKvCache cache;
    private RowPositions placed;
    private int layer, heads, group;
    private boolean byChunk;
    /** Per tile: its first row, first query (row-major over the run's group of heads), queries, kv head, chunks. */
    private int tiles;
    private int[] tileFirstRow = new int[16], tileFirstQuery = new int[16], tileQueries = new int[16],
            tileKvHead = new int[16], tileChunks = new int[16], tileFirstUnit = new int[17];
    /** By-chunk mode: the partials of every (tile, chunk): m and l per query, then o per query. */
    private float[] partialM = new float[0], partialL = new float[0], partialO = new float[0];

    ChunkedAttention(WorkerPool pool, NativeFloatOps nativeOps) {
        this.pool = pool;
        this.nativeOps = nativeOps;
        int threads = pool.threads();
        queries = new float[threads][0];
        scores = new float[threads][TILE * CHUNK];
        row = new float[threads][0];
        seen = new int[threads][TILE];
        bits = new short[threads][0];
        keyBlocks = new float[threads][0];
        bytes = new byte[threads][0];
        chunkM = new float[threads][TILE];
        chunkL = new float[threads][TILE];
        chunkO = new float[threads][0];
        foldM = new float[threads][TILE];
        foldL = new float[threads][TILE];
        foldO = new float[threads][0];
    }

    /** As {@link CpuAttention#attention}, over a cache of rows of its types. */
    void attention(MemorySegment q, CpuKvCache cache, int layer, MemorySegment out, RowPositions placed, int heads) {
        int rows = placed.rows(), headDim = cache.headDim();
        if (rows == 0) return;
        if (headDim > MOST_HEAD_DIM) throw new IllegalArgumentException("head dim " + headDim + " > " + MOST_HEAD_DIM);
        int group = heads / cache.kvHeads();
        tiles = 0;
        int mostChunks = 0;
        for (int first = 0, end; first < rows; first = end) {
            end = placed.runEnd(first);
            int queryCount = (end - first) * group;
            for (int kvHead = 0; kvHead < cache.kvHeads(); kvHead++) {
                for (int query = 0; query < queryCount; query += TILE) {
                    if (tiles == tileFirstRow.length) growTiles();
                    int count = Math.min(TILE, queryCount - query);
                    int lastRow = first + (query + count - 1) / group;
                    tileFirstRow[tiles] = first;
                    tileFirstQuery[tiles] = query;
                    tileQueries[tiles] = count;
                    tileKvHead[tiles] = kvHead;
                    // Rows of a run have rising positions: the tile's last row sees the most.
                    tileChunks[tiles] = (placed.position(lastRow) + CHUNK) / CHUNK;
                    mostChunks = Math.max(mostChunks, tileChunks[tiles]);
                    tiles++;
                }
            }
        }
        // Few tiles: split each by chunks so that every worker has work; the results are the same either way.
        byChunk = mostChunks > 1 && tiles < 4 * pool.threads();
        tileFirstUnit[0] = 0;
        for (int t = 0; t < tiles; t++) tileFirstUnit[t + 1] = tileFirstUnit[t] + (byChunk ? tileChunks[t] : 1);
        int units = tileFirstUnit[tiles];
        for (int w = 0; w < queries.length; w++) {
            if (queries[w].length < TILE * headDim) {
                queries[w] = new float[TILE * headDim];
                chunkO[w] = new float[TILE * headDim];
                foldO[w] = new float[TILE * headDim];
                row[w] = new float[headDim];
                keyBlocks[w] = new float[headDim * CpuKvCache.TYPED_KEY_BLOCK];
                bits[w] = new short[headDim * CpuKvCache.TYPED_KEY_BLOCK];
                // a block of q8_0 keys, if any (a row of values is less)
                bytes[w] = new byte[(headDim + 31) / 32 * DType.Q8_0.blockBytes() * CpuKvCache.TYPED_KEY_BLOCK];
            }
        }
        if (byChunk && partialO.length < (long) units * TILE * headDim) {
            partialM = new float[units * TILE];
            partialL = new float[units * TILE];
            partialO = new float[units * TILE * headDim];
        }
        this.q = q;
        this.out = out;
        this.cache = cache;
        this.placed = placed;
        this.layer = layer;
        this.heads = heads;
        this.group = group;
        long work = 2L * rows * heads * placed.mostPositions() * headDim;
        pool.run(this, units, work);
        if (byChunk) pool.run(folding, tiles, (long) units * TILE * headDim);
        this.q = null;
        this.out = null;
        this.cache = null;
        this.placed = null;
    }

    @Override
    public void run(int unit, int worker) {
        int tile = Arrays.binarySearch(tileFirstUnit, 0, tiles + 1, unit);
        if (tile < 0) tile = -tile - 2; // the tile whose first unit is the largest at or before this one
        int headDim = cache.headDim(), count = loadTile(tile, worker);
        if (byChunk) {
            int chunk = unit - tileFirstUnit[tile];
            int at = unit * TILE;
            computeChunk(tile, chunk, worker, count, partialM, partialL, partialO, at);
            return;
        }
        float[] m = foldM[worker], l = foldL[worker], o = foldO[worker];
        Arrays.fill(m, 0, count, Float.NEGATIVE_INFINITY);
        Arrays.fill(l, 0, count, 0f);
        Arrays.fill(o, 0, count * headDim, 0f);
        for (int chunk = 0; chunk < tileChunks[tile]; chunk++) {
            computeChunk(tile, chunk, worker, count, chunkM[worker], chunkL[worker], chunkO[worker], 0);
            for (int i = 0; i < count; i++) {
                fold(m, l, o, i, chunkM[worker][i], chunkL[worker][i], chunkO[worker], i * headDim, headDim);
            }
        }
        writeOut(tile, count, m, l, o, 0, headDim);
    }

    /** By-chunk mode's second step: a tile's partials folded in chunk order, as {@link #run} folds them. */
    private void foldPartials(int tile, int worker) {
        int headDim = cache.headDim(), count = tileQueries[tile];
        float[] m = foldM[worker], l = foldL[worker], o = foldO[worker];
        Arrays.fill(m, 0, count, Float.NEGATIVE_INFINITY);
        Arrays.fill(l, 0, count, 0f);
        Arrays.fill(o, 0, count * headDim, 0f);
        for (int unit = tileFirstUnit[tile]; unit < tileFirstUnit[tile + 1]; unit++) {
            for (int i = 0; i < count; i++) {
                int at = unit * TILE + i;
                fold(m, l, o, i, partialM[at], partialL[at], partialO, at * headDim, headDim);
            }
        }
        writeOut(tile, count, m, l, o, 0, headDim);
    }

    /** Copies the tile's queries into the worker's scratch with the positions each sees; returns how many. */
    private int loadTile(int tile, int worker) {
        int headDim = cache.headDim(), count = tileQueries[tile];
        for (int i = 0; i < count; i++) {
            int query = tileFirstQuery[tile] + i;
            int r = tileFirstRow[tile] + query / group, head = tileKvHead[tile] * group + query % group;
            seen[worker][i] = placed.position(r) + 1;
            MemorySegment.copy(q, FLOAT, ((long) r * heads + head) * headDim * Float.BYTES, queries[worker],
                    i * headDim, headDim);
        }
        return count;
    }

    private void writeOut(int tile, int count, float[] m, float[] l, float[] o, int at, int headDim) {
        for (int i = 0; i < count; i++) {
            int query = tileFirstQuery[tile] + i;
            int r = tileFirstRow[tile] + query / group, head = tileKvHead[tile] * group + query % group;
            long offset = ((long) r * heads + head) * headDim * Float.BYTES;
            float total = l[i];
            for (int e = 0; e < headDim; e++) out.set(FLOAT, offset + 4L * e, o[at + i * headDim + e] / total);
        }
    }

    /**
     * The online softmax's step: query i's state (M, L, O) takes a chunk's partial (cm, cl, co[coAt..]). A chunk the
     * query saw nothing of (cl = 0) changes nothing.
     */
    static void fold(float[] m, float[] l, float[] o, int i, float cm, float cl, float[] co, int coAt, int headDim) {
        if (cl == 0) return;
        int oAt = i * headDim;
        if (m[i] == Float.NEGATIVE_INFINITY) {
            m[i] = cm;
            l[i] = cl;
            System.arraycopy(co, coAt, o, oAt, headDim);
            return;
        }
        float most = Math.max(m[i], cm);
        float a = FastExp.exp(m[i] - most), b = FastExp.exp(cm - most);
        m[i] = most;
        l[i] = Math.fma(cl, b, l[i] * a);
        for (int e = 0; e < headDim; e++) o[oAt + e] = Math.fma(co[coAt + e], b, o[oAt + e] * a);
    }

    /**
     * The partials of the tile's {@code count} queries over chunk {@code chunk}: m and l of query i to m[at + i] and
     * l[at + i], o to o[(at + i)·headDim..].
     */
    private void computeChunk(int tile, int chunk, int worker, int count, float[] m, float[] l, float[] o, int at) {
        int headDim = cache.headDim();
        int sequence = placed.sequence(tileFirstRow[tile]), kvHead = tileKvHead[tile];
        KvCacheType keyType = cache.types().keys(), valueType = cache.types().values();
        int keyBlock = CpuKvCache.TYPED_KEY_BLOCK;
        long keyBlockBytes = keyBlock * keyType.rowBytes(headDim), valueRow = valueType.rowBytes(headDim);
        MemorySegment keys = cache.keys()[layer], values = cache.values()[layer];
        long keyBase = cache.typedKeyBlockOffset(sequence, kvHead, 0);
        long valueBase = cache.rowOffset(sequence, kvHead, 0, valueRow);
        int[] sees = seen[worker];
        int from = chunk * CHUNK, most = 0;
        for (int i = 0; i < count; i++) most = Math.max(most, sees[i]);
        int to = Math.min(from + CHUNK, most);
        float scale = (float) (1.0 / Math.sqrt(headDim));
        if (nativeOps != null) {
            nativeOps.attentionChunk(queries[worker], count, sees, keys.asSlice(keyBase), values.asSlice(valueBase),
                    keyType, valueType, headDim, from, to, scale, scores[worker], m, l, o, at);
            return;
        }
        float[] qs = queries[worker], s = scores[worker], r = row[worker], kt = keyBlocks[worker];
        // A block's scores: per key, the FMA chain over the dimensions, L keys to a vector (as the native kernel);
        // those past to, or past what a query sees, are never read.
        for (int p0 = from; p0 < to; p0 += keyBlock) {
            KvRows.loadKeyBlock(keyType, keys, keyBase + (p0 / keyBlock) * keyBlockBytes, headDim, kt, bits[worker],
                    bytes[worker]);
            for (int i = 0; i < count; i++) {
                for (int j = 0; j < keyBlock; j += L) {
                    FloatVector acc = FloatVector.zero(F);
                    for (int d = 0; d < headDim; d++) {
                        acc = FloatVector.broadcast(F, qs[i * headDim + d])
                                .fma(FloatVector.fromArray(F, kt, d * keyBlock + j), acc);
                    }
                    acc.mul(scale).intoArray(s, i * CHUNK + p0 - from + j);
                }
            }
        }
        for (int i = 0; i < count; i++) {
            int n = Math.min(to, sees[i]) - from, si = i * CHUNK;
            Arrays.fill(o, (at + i) * headDim, (at + i + 1) * headDim, 0f);
            if (n <= 0) {
                m[at + i] = Float.NEGATIVE_INFINITY;
                l[at + i] = 0;
                continue;
            }
            float max = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < n; j++) max = Math.max(max, s[si + j]);
            float sum = 0;
            for (int j = 0; j < n; j++) sum += s[si + j] = FastExp.exp(s[si + j] - max);
            m[at + i] = max;
            l[at + i] = sum;
        }
        for (int p = from; p < to; p++) {
            KvRows.loadValue(valueType, values, valueBase + p * valueRow, headDim, r, bits[worker], bytes[worker]);
            for (int i = 0; i < count; i++) {
                if (p < sees[i]) weigh(r, s[i * CHUNK + p - from], o, (at + i) * headDim, headDim);
            }
        }
    }

    /** o[at..at + n) += w · v. */
    private static void weigh(float[] v, float w, float[] o, int at, int n) {
        int full = n - n % L, d = 0;
        FloatVector weight = FloatVector.broadcast(F, w);
        for (; d < full; d += L) {
            FloatVector.fromArray(F, v, d).fma(weight, FloatVector.fromArray(F, o, at + d)).intoArray(o, at + d);
        }
        for (; d < n; d++) o[at + d] = Math.fma(v[d], w, o[at + d]);
    }

    private void growTiles() {
        int n = 2 * tileFirstRow.length;
        tileFirstRow = Arrays.copyOf(tileFirstRow, n);
        tileFirstQuery = Arrays.copyOf(tileFirstQuery, n);
        tileQueries = Arrays.copyOf(tileQueries, n);
        tileKvHead = Arrays.copyOf(tileKvHead, n);
        tileChunks = Arrays.copyOf(tileChunks, n);
        tileFirstUnit = Arrays.copyOf(tileFirstUnit, n + 1);
    }
}
