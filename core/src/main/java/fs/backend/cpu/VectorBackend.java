package fs.backend.cpu;

import static fs.backend.BackendChecks.requireLength;
import static fs.backend.BackendChecks.requireRange;
import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.LE;

import fs.backend.Backend;
import fs.backend.BackendChecks;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;
import fs.backend.KvCache;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import jdk.incubator.vector.FloatVector;

/**
 * The CPU backend on the Vector API: float32 activations off-heap, weights read in place from the checkpoint's
 * memory (plain or quantized blocks) and decoded to float32 in the kernels: each weight format is one
 * {@link RowFormat}, chosen at upload ({@link RowFormats}), and {@link MatmulTask} runs the matmul over it. With
 * {@link CpuKernels} asking for native kernels, the matmuls of the formats libfscpu has run there instead
 * ({@link NativeMatmul}: activations quantized to 8 bits, integer dot products), and everything else here. Weights of
 * the formats libfscpu has a repacked layout for (Q4_K, Q4_0; Q8_0, Q6_K, Q2_K, Q3_K on avx512 and avx2) are repacked
 * at upload, unless the kernels say not ({@link Repacker}): a copy of their rows on the backend's arena, which lives
 * until {@link #close}.
 *
 * <p>matmul and attention (and the larger element-wise ops) are split over a {@link WorkerPool}; every output is
 * computed by the same sequence of float operations whatever the thread count, so results are bitwise reproducible
 * across thread counts. They are across batch sizes too, with one exception: a one-row matmul (decode, bound by
 * memory) sums in vector lanes and a tree, in its format's order, a batched one (prefill, bound by arithmetic) in one sequential chain per output
 * (see {@link MatmulKernels}), so a prompt row and the same row decoded alone differ by rounding.
 */
public final class VectorBackend implements Backend {
    /**
     * {@code -Dfs.cpu.experts=each}: the native expert matmul one expert at a time, as before
     * {@link NativeExpertMatmul} (same floats; for measuring the difference).
     */
    private final boolean expertsOneByOne = "each".equals(System.getProperty("fs.cpu.experts"));
    /** Elements per unit of element-wise work. */
    private static final int ELEMENTWISE_UNIT = 1 << 14;

    private final Arena arena = Arena.ofShared();
    private final WorkerPool pool;
    private final Map<Rope, RopeTable> ropeTables = new HashMap<>();
    private final MatmulTask matmulTask;
    /** The native matmul of the formats it has, or null when the Vector API runs every matmul. */
    private final NativeMatmul nativeMatmul;
    /** Repacks weights at upload for the native matmuls, or null (no native kernels, or repacking off). */
    private final Repacker repacker;
    /** The formats of the weights repacked so far, for the description. */
    private final Set<DType> repackedFormats = EnumSet.noneOf(DType.class);
    /**
     * With native kernels, the formats of the matrices uploaded so far (each one the native matmul covers), for the
     * description: it says what runs for these weights.
     */
    private final Set<DType> matrixFormats = EnumSet.noneOf(DType.class);
    /** The native matmul of a call's experts at once, with {@link #nativeMatmul}; else null. */
    private final NativeExpertMatmul nativeExperts;
    private final NativeFloatOps nativeFloatOps; // null: the Java kernels
    /** Why native kernels that were asked for are not running, or null. */
    private final String nativeUnavailable;
    private final CpuAttention cpuAttention;
    private final ChunkedAttention chunkedAttention;
    private final SiluMulTask siluMulTask = new SiluMulTask();
    /** Where rmsNorm spills its accumulator to sum the lanes (it runs on the calling thread). */
    private final float[] laneScratch = new float[MatmulKernels.LANES_SCRATCH];
    /** A weight row decoded to floats: rmsNorm's gamma, an embedding. */
    private float[] decodedRow = new float[0];
    /** One kv head's key or value on its way into a typed cache (storeKv runs on the calling thread). */
    private float[] kvRow = new float[0];
    /** {@link #decodedRow} as a segment for the native ops, made when the array is (not per call). */
    private MemorySegment decodedRowSegment = MemorySegment.ofArray(decodedRow);
    /** The expert matmul's gathered inputs and outputs; grown as needed (the backend runs on one thread). */
    private final MemorySegment[] expertScratch = {MemorySegment.NULL, MemorySegment.NULL};
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
        repacker = kernels.nativeKernels() == null || !kernels.repacks() ? null
                : new Repacker(kernels.nativeKernels(), arena);
        nativeExperts = kernels.nativeKernels() == null ? null
                : new NativeExpertMatmul(pool, kernels.nativeKernels(), arena);
        nativeFloatOps = kernels.nativeKernels() == null ? null : kernels.nativeKernels().floatOps();
        siluMulTask.nativeOps = nativeFloatOps;
        nativeUnavailable = kernels.unavailable();
        cpuAttention = new CpuAttention(pool, nativeFloatOps);
        chunkedAttention = new ChunkedAttention(pool, nativeFloatOps);
    }

    @Override
    public String description() {
        String threads = pool.threads() + (pool.threads() == 1 ? " thread" : " threads");
        if (nativeMatmul != null) {
            // int8 for block formats (the activations quantized to Q8_0/Q8_K), float for BF16/F16/F32 weights; no
            // word before any matrix is uploaded.
            boolean int8 = matrixFormats.stream().anyMatch(DType::isQuantized);
            boolean floats = matrixFormats.stream().anyMatch(type -> !type.isQuantized());
            String kinds = int8 && floats ? " int8 and float" : int8 ? " int8" : floats ? " float" : "";
            String repacked = repackedFormats.isEmpty() ? ""
                    : repackedFormats.stream().map(DType::name).collect(Collectors.joining("/", ", ", " repacked"));
            return "cpu (native " + nativeMatmul.isa() + kinds + " matmul" + repacked + ", Vector API "
                    + F.vectorBitSize() + "-bit, " + threads + ")";
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
        BackendChecks.checkUpload(tensor, "cpu", this::supports);
        RowFormat format = RowFormats.of(tensor.dtype()).orElseThrow();
        NativeKernels.RepackedRows repacked = repacker == null ? null : repacker.repack(tensor);
        if (repacked != null) repackedFormats.add(tensor.dtype());
        if (tensor.rows() > 1 && nativeMatmul != null) matrixFormats.add(tensor.dtype());
        MemorySegment data = repacker != null && tensor.rows() == 1 ? repacker.copy(tensor.data()) : tensor.data();
        return new CpuWeight(tensor.name(), tensor.dtype(), tensor.rows(), tensor.columns(), data, format, repacked);
    }

    /** Waits for the {@link Repacker}'s copies of the weights uploaded so far. */
    @Override
    public void awaitUploads() {
        checkOpen();
        if (repacker != null) repacker.finish();
    }

    @Override
    public Buffer allocate(long length) {
        checkOpen();
        if (length < 0) throw new IllegalArgumentException("negative buffer length " + length);
        return new CpuBuffer(this, arena.allocate(Math.max(1, length) * Float.BYTES, 64), length);
    }

    @Override
    public KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim,
                                   KvCacheTypes types) {
        checkOpen();
        BackendChecks.checkKvCacheShape(layers, sequences, contextLength, kvHeads, headDim);
        BackendChecks.checkKvCacheTypes(types, headDim, kvCacheTypes(), "cpu");
        long rows = (long) sequences * contextLength * kvHeads;
        boolean float32 = types.equals(KvCacheTypes.F32);
        long valueBytes = rows * types.values().rowBytes(headDim);
        long keyBytes = float32 ? CpuKvCache.keyBytes(sequences, contextLength, kvHeads, headDim)
                : CpuKvCache.typedKeyBytes(sequences, contextLength, kvHeads, headDim, types.keys());
        MemorySegment[] keys = new MemorySegment[layers];
        MemorySegment[] values = new MemorySegment[layers];
        for (int l = 0; l < layers; l++) {
            keys[l] = LazyZeroMemory.allocate(keyBytes, arena);
            values[l] = LazyZeroMemory.allocate(valueBytes, arena);
        }
        return new CpuKvCache(this, layers, sequences, contextLength, kvHeads, headDim, types, keys, values);
    }

    @Override
    public Set<KvCacheType> kvCacheTypes() {
        return EnumSet.allOf(KvCacheType.class);
    }

    @Override
    public void embed(Weight table, int[] tokens, Buffer out) {
        CpuWeight t = weight(table);
        MemorySegment o = segment(out);
        int width = (int) t.columns();
        requireLength(out, (long) tokens.length * width, "embed output");
        for (int r = 0; r < tokens.length; r++) {
            BackendChecks.checkToken(t, tokens[r]);
            widenRow(t, tokens[r], o, (long) r * width * Float.BYTES);
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
        if (decodedRow.length < k) {
            decodedRow = new float[k];
            decodedRowSegment = MemorySegment.ofArray(decodedRow);
        }
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
            nativeFloatOps.rmsNorm(xs, decodedRowSegment, os, rows, width, eps);
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
            acc.intoArray(laneScratch, 0);
            float sumSquares = MatmulKernels.sumLanes(laneScratch, 0);
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
        matmul(xs, weight, os, rows);
    }

    private void matmul(MemorySegment xs, CpuWeight weight, MemorySegment os, int rows) {
        if (nativeMatmul != null && nativeMatmul.covers(weight)) nativeMatmul.matmul(xs, weight, os, rows);
        else matmulTask.matmul(xs, weight, os, rows);
    }

    /**
     * With native kernels for the experts' format (all of one dtype), all experts at once
     * ({@link NativeExpertMatmul}: the same floats as one native matmul per expert). Otherwise per expert, one
     * matmul over the slots that chose it: a single slot reads its input row and writes its output
     * row in place; several are gathered into scratch rows first and scattered after, so the expert's matrix is read
     * once for all of them.
     */
    @Override
    public void matmulExperts(Buffer x, boolean xPerSlot, List<Weight> experts, ExpertRouting routing, Buffer out) {
        if (experts.size() != routing.expertCount()) {
            throw new IllegalArgumentException("a routing among " + routing.expertCount() + " experts given "
                    + experts.size() + " expert weights");
        }
        CpuWeight first = weight(experts.getFirst());
        long in = first.columns(), outWidth = first.rows();
        MemorySegment xs = segment(x), os = segment(out);
        requireLength(x, (xPerSlot ? routing.slots() : routing.rows()) * in, "expert matmul input");
        requireLength(out, routing.slots() * outWidth, "expert matmul output");
        if (nativeExperts != null && !expertsOneByOne && nativeMatmul.covers(first)) {
            CpuWeight[] ws = new CpuWeight[experts.size()];
            boolean same = true;
            for (int e = 0; e < ws.length; e++) {
                ws[e] = weight(experts.get(e));
                if (ws[e].rows() != outWidth || ws[e].columns() != in) {
                    throw new IllegalArgumentException("expert " + e + " is " + ws[e].rows() + "x" + ws[e].columns()
                            + ", expert 0 " + outWidth + "x" + in);
                }
                same &= ws[e].dtype() == first.dtype();
            }
            if (same) {
                if (routing.slots() > 0) nativeExperts.matmul(xs, xPerSlot, ws, routing, os);
                return;
            }
        }
        long inBytes = in * Float.BYTES, outBytes = outWidth * Float.BYTES;
        for (int e = 0; e < routing.expertCount(); e++) {
            int start = routing.groupStart(e), n = routing.groupEnd(e) - start;
            if (n == 0) continue;
            CpuWeight w = weight(experts.get(e));
            if (w.rows() != outWidth || w.columns() != in) {
                throw new IllegalArgumentException("expert " + e + " is " + w.rows() + "x" + w.columns()
                        + ", expert 0 " + outWidth + "x" + in);
            }
            if (n == 1) {
                int slot = routing.groupedSlot(start);
                long row = xPerSlot ? slot : slot / routing.used();
                matmul(xs.asSlice(row * inBytes, inBytes), w, os.asSlice(slot * outBytes, outBytes), 1);
                continue;
            }
            MemorySegment gathered = expertScratch(0, n * inBytes), result = expertScratch(1, n * outBytes);
            for (int i = 0; i < n; i++) {
                int slot = routing.groupedSlot(start + i);
                long row = xPerSlot ? slot : slot / routing.used();
                MemorySegment.copy(xs, row * inBytes, gathered, i * inBytes, inBytes);
            }
            matmul(gathered, w, result, n);
            for (int i = 0; i < n; i++) {
                MemorySegment.copy(result, i * outBytes, os, routing.groupedSlot(start + i) * outBytes, outBytes);
            }
        }
    }

    /** Scratch segment {@code which} of at least {@code bytes}, grown (never shrunk) on the backend's arena. */
    private MemorySegment expertScratch(int which, long bytes) {
        if (expertScratch[which].byteSize() < bytes) {
            expertScratch[which] = arena.allocate(Math.max(bytes, 2 * expertScratch[which].byteSize()), 64);
        }
        return expertScratch[which].asSlice(0, bytes);
    }

    @Override
    public void sumExperts(Buffer slots, ExpertRouting routing, Buffer out, int width) {
        MemorySegment ss = segment(slots), os = segment(out);
        requireLength(slots, (long) routing.slots() * width, "expert sum input");
        requireLength(out, (long) routing.rows() * width, "expert sum output");
        int used = routing.used();
        int full = width - width % L;
        for (int r = 0; r < routing.rows(); r++) {
            long o = (long) r * width * Float.BYTES;
            for (int i = 0; i < full; i += L) {
                FloatVector sum = FloatVector.zero(F);
                for (int j = 0; j < used; j++) {
                    int slot = r * used + j;
                    FloatVector y = FloatVector.fromMemorySegment(F, ss, ((long) slot * width + i) * Float.BYTES, LE);
                    sum = sum.add(y.mul(routing.weight(slot))); // rounded product, then sum: as Hugging Face's
                }
                sum.intoMemorySegment(os, o + (long) i * Float.BYTES, LE);
            }
            for (int i = full; i < width; i++) {
                float sum = 0;
                for (int j = 0; j < used; j++) {
                    int slot = r * used + j;
                    sum += routing.weight(slot) * ss.getAtIndex(FLOAT, (long) slot * width + i);
                }
                os.setAtIndex(FLOAT, (long) r * width + i, sum);
            }
        }
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
        BackendChecks.checkPositions(cache, layer, placed, "storeKv");
        if (!cache.float32()) {
            storeRows(cache, layer, ks, vs, placed);
            return;
        }
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
                if (nativeFloatOps != null) {
                    nativeFloatOps.storeKey(ks.asSlice(src, headBytes), keys.asSlice(dst), headDim, CpuKvCache.KEY_BLOCK);
                    continue;
                }
                for (int d = 0; d < headDim; d++) keys.set(FLOAT, dst + d * dimensionStride, ks.get(FLOAT, src + 4L * d));
            }
        }
    }

    /** storeKv into a cache of typed rows: each kv head's key and value converted to its type. */
    private void storeRows(CpuKvCache cache, int layer, MemorySegment ks, MemorySegment vs, RowPositions placed) {
        int kvHeads = cache.kvHeads(), headDim = cache.headDim();
        KvCacheType keyType = cache.types().keys(), valueType = cache.types().values();
        long valueRow = valueType.rowBytes(headDim);
        if (kvRow.length < headDim) kvRow = new float[headDim];
        float[] row = kvRow;
        for (int r = 0; r < placed.rows(); r++) {
            int position = placed.position(r), sequence = placed.sequence(r);
            for (int h = 0; h < kvHeads; h++) {
                long src = ((long) r * kvHeads + h) * headDim * Float.BYTES;
                MemorySegment.copy(ks, FLOAT, src, row, 0, headDim);
                KvRows.storeKey(keyType, row, headDim, cache.keys()[layer],
                        cache.typedKeyBlockOffset(sequence, h, position / CpuKvCache.TYPED_KEY_BLOCK),
                        position % CpuKvCache.TYPED_KEY_BLOCK);
                MemorySegment.copy(vs, FLOAT, src, row, 0, headDim);
                KvRows.storeValue(valueType, row, headDim, cache.values()[layer],
                        cache.rowOffset(sequence, h, position, valueRow));
            }
        }
    }

    @Override
    public void attention(Buffer q, KvCache kvCache, int layer, Buffer out, RowPositions placed, int heads) {
        CpuKvCache cache = cache(kvCache);
        int headDim = cache.headDim();
        int rows = placed.rows();
        requireLength(q, (long) rows * heads * headDim, "attention queries");
        requireLength(out, (long) rows * heads * headDim, "attention output");
        BackendChecks.checkPositions(cache, layer, placed, "attention");
        BackendChecks.checkHeads(heads, cache);
        if (cache.float32()) {
            cpuAttention.attention(segment(q), cache, layer, segment(out), placed, heads);
        } else {
            chunkedAttention.attention(segment(q), cache, layer, segment(out), placed, heads);
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
    public void read(Buffer src, long offset, MemorySegment dst) {
        MemorySegment s = segment(src);
        requireRange(src, offset, BackendChecks.floatsIn(dst, "read destination"), "read source");
        MemorySegment.copy(s, offset * Float.BYTES, dst, 0, dst.byteSize());
    }

    @Override
    public void write(MemorySegment src, Buffer dst, long offset) {
        MemorySegment d = segment(dst);
        requireRange(dst, offset, BackendChecks.floatsIn(src, "write source"), "write destination");
        MemorySegment.copy(src, 0, d, offset * Float.BYTES, src.byteSize());
    }

    /** None: buffers are host memory, which a transfer reads or writes directly. */
    @Override
    public Optional<MemorySegment> pinnedStaging(long bytes) {
        return Optional.empty();
    }

    @Override
    public int argmax(Buffer x, long offset, int length) {
        MemorySegment s = segment(x);
        requireRange(x, offset, length, "argmax input");
        if (length <= 0) throw new IllegalArgumentException("argmax of no elements");
        if (nativeFloatOps != null) return nativeFloatOps.argmax(s.asSlice(4 * offset, 4L * length), length);
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
        if (repacker != null) repacker.close(); // before the arena its copies write into
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
        if (repacker != null) repacker.releaseAgain(); // an op: the uploads before it are done
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
}
