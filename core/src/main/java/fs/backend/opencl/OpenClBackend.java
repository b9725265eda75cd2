package fs.backend.opencl;

import static fs.backend.BackendChecks.requireLength;
import static fs.backend.BackendChecks.requireRange;
import static fs.opencl.bindings.opencl_h.*;

import fs.FsException;
import fs.HumanSize;
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
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The Qwen3 ops on one OpenCL device. Weights are uploaded once in their stored dtype, block formats as their blocks
 * (weights.cl reads F32, F16 and BF16, blocks.cl the block formats); activations and the KV cache (in any
 * {@link KvCacheType}, kv_cache.cl) stay on the device, and only {@link #read} and {@link #argmax} wait for the queue.
 * Not thread-safe: one thread drives a backend.
 */
public final class OpenClBackend implements Backend {
    /**
     * A system property: bytes of device memory beyond which this backend's allocations fail as a driver's out of
     * memory does, below what the device reports and so unknown to an offload plan. How tests make a device run out of
     * memory partway through a load.
     */
    public static final String MEMORY_LIMIT = "fs.opencl.memory-limit";
    /** Work-group size of the GPU design's reductions (a power of two, capped by what the device allows). */
    private static final int GPU_GROUP = 256;

    record ClBuffer(MemorySegment handle, long length, OpenClBackend owner) implements Buffer, ClMemory {}

    record ClWeight(String name, DType dtype, long rows, long columns, MemorySegment handle, OpenClBackend owner)
            implements Weight, ClMemory {}

    /** A rope's inverse frequencies, rounded to float, uploaded once. */
    private record RopeFrequencies(Rope rope, ClBuffer inverse) {}

    /** A device buffer of bytes: a KV cache layer's keys or values in their type. */
    record ClBytes(MemorySegment handle, long bytes) implements ClMemory {}

    /**
     * Per layer, keys and values laid out [sequence][position][kvHead][headDim elements as their type], and the
     * kernels built for the types.
     */
    record ClKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim, KvCacheTypes types,
            List<ClBytes> keys, List<ClBytes> values, KernelCache.KvCacheKernels kernels, OpenClBackend owner)
            implements KvCache {}

    private final DeviceContext device;
    private final KernelDesign design;
    private final Launcher launcher;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment queue;
    private final DeviceMemory memory;
    private final List<MemorySegment> memObjects = new ArrayList<>();
    private final KernelCache kernels;
    private final List<RopeFrequencies> ropeFrequencies = new ArrayList<>();
    private final ClKernel ropeKernel;
    private final ClKernel siluMul;
    private final ClKernel add;
    private final ClKernel argmax;
    private final ClKernel sumExperts;
    private final MemorySegment scratch;
    private ClBuffer tokens;
    private final PositionsUpload positions;
    /** An expert sum's slot weights. */
    private final FloatsUpload slotWeights;
    /** An expert matmul's gathered input rows and its output rows before they are scattered to their slots. */
    private ClBuffer expertInput, expertOutput;
    /** A block-format weight's prefill matmul. */
    private final PanelMatmul panels;
    private final ClBuffer argmaxResult;
    /** Host memory for token ids, reads and writes. */
    private final HostStaging staging;
    private boolean closed;

    /** A backend on {@code device} (from {@link OpenCl#select}), with the kernel design that suits its type. */
    public OpenClBackend(OpenCl.Device device) {
        this(device, KernelDesign.of(device));
    }

    /** Tests force a design to run both on PoCL. */
    OpenClBackend(OpenCl.Device device, KernelDesign design) {
        this.device = DeviceContext.of(device);
        this.design = design;
        this.memory = new DeviceMemory(device.name(),
                Math.min(device.globalMemSize(), Long.getLong(MEMORY_LIMIT, Long.MAX_VALUE)), device.maxAllocSize());
        this.scratch = arena.allocate(ValueLayout.JAVA_LONG);
        MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
        this.queue = clCreateCommandQueue(this.device.context, this.device.deviceId, 0, status);
        ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateCommandQueue(" + device.name() + ")");
        this.kernels = new KernelCache(this.device, design);
        this.staging = new HostStaging(this.device.context, queue, 4096);
        this.positions = new PositionsUpload(this.device.context, queue, length -> buffer("row positions", length));
        this.slotWeights = new FloatsUpload(queue, "expert slot weights",
                length -> buffer("expert slot weights", length));
        MemorySegment program = this.device.program("activations.cl", KernelConstants.OPTIONS);
        this.ropeKernel = kernels.kernel(program, design.kernel("rope"));
        this.siluMul = kernels.kernel(program, "silu_mul");
        this.add = kernels.kernel(program, "add");
        this.argmax = kernels.kernel(program, "argmax");
        this.sumExperts = kernels.kernel(program, "sum_experts");
        this.launcher = switch (design) {
            case GPU -> new GpuLauncher(queue, groupSize(kernels.kvCache(KvCacheTypes.F32).attention(), argmax));
            case CPU -> new CpuLauncher(queue);
        };
        this.panels = new PanelMatmul(queue, launcher, length -> buffer("prefill panel scratch", length));
        this.argmaxResult = buffer("argmax result", 1);
    }

    @Override
    public String description() {
        OpenCl.Device d = device.device;
        return "opencl (" + d.name() + ", " + d.type() + ", " + d.computeUnits() + " compute units"
                + (design == KernelDesign.of(d) ? "" : ", " + design + " kernels") + ")";
    }

    OpenCl.Device device() {
        return device.device;
    }

    /** The device's memory, CL_DEVICE_GLOBAL_MEM_SIZE: what -ngl auto plans from. */
    public long memorySize() {
        return device.device.globalMemSize();
    }

    /** Bytes of device memory this backend holds now (weights, caches, buffers), as it counts them. */
    long memoryInUse() {
        return memory.reserved();
    }

    /** The dtypes weights.cl has kernels for. */
    private static final Set<DType> DENSE = EnumSet.of(DType.F32, DType.F16, DType.BF16);

    @Override
    public boolean supports(DType dtype) {
        return reads(dtype);
    }

    private static boolean reads(DType dtype) {
        return DENSE.contains(dtype) || isBlockFormat(dtype);
    }

    private static boolean isBlockFormat(DType dtype) {
        return BlockKernels.reads(dtype);
    }

    @Override
    public Weight upload(Tensor tensor) {
        checkOpen();
        BackendChecks.checkUpload(tensor, "OpenCL", OpenClBackend::reads);
        // rmsNorm's kernels (weights.cl) read a norm's weights as floats; llama.cpp keeps every 1-D tensor in F32
        if (tensor.rank() == 1 && isBlockFormat(tensor.dtype())) {
            throw new FsException("tensor " + tensor.name() + " is a 1-D weight stored as " + tensor.dtype()
                    + "; the OpenCL backend reads 1-D weights (norms) in " + DENSE);
        }
        long bytes = tensor.data().byteSize();
        memory.reserve(tensor.name(), bytes);
        MemorySegment handle;
        try (Arena copy = Arena.ofConfined()) {
            MemorySegment host = tensor.data().isNative() ? tensor.data()
                    : copy.allocate(bytes, 16).copyFrom(tensor.data());
            handle = createBuffer(CL_MEM_READ_ONLY() | CL_MEM_COPY_HOST_PTR(), bytes, host, tensor.name());
        }
        return new ClWeight(tensor.name(), tensor.dtype(), tensor.rows(), tensor.columns(), handle, this);
    }

    @Override
    public Buffer allocate(long length) {
        checkOpen();
        return buffer("activation buffer of " + length + " floats", length);
    }

    @Override
    public KvCache allocateKvCache(int layers, int sequences, int contextLength, int kvHeads, int headDim,
                                   KvCacheTypes types) {
        checkOpen();
        BackendChecks.checkKvCacheShape(layers, sequences, contextLength, kvHeads, headDim);
        BackendChecks.checkKvCacheTypes(types, headDim, kvCacheTypes(), "opencl");
        KernelCache.KvCacheKernels kvKernels = kvCacheKernels(types);
        long headRows = (long) sequences * contextLength * kvHeads;
        String shape = sequences == 1 ? "--ctx " + contextLength : sequences + " sequences of " + contextLength;
        List<ClBytes> keys = new ArrayList<>();
        List<ClBytes> values = new ArrayList<>();
        for (int layer = 0; layer < layers; layer++) {
            keys.add(bytes("KV cache (keys of layer " + layer + " as " + types.keys() + ", " + shape + ")",
                    headRows * types.keys().rowBytes(headDim)));
            values.add(bytes("KV cache (values of layer " + layer + " as " + types.values() + ", " + shape + ")",
                    headRows * types.values().rowBytes(headDim)));
        }
        return new ClKvCache(layers, sequences, contextLength, kvHeads, headDim, types, List.copyOf(keys),
                List.copyOf(values), kvKernels, this);
    }

    /**
     * The kernels for a cache of {@code types}, built with the first cache of them. The GPU design's work-group size
     * was chosen for the f32 attention kernel; another build of it must run in groups as large.
     */
    private KernelCache.KvCacheKernels kvCacheKernels(KvCacheTypes types) {
        KernelCache.KvCacheKernels built = kernels.kvCache(types);
        if (launcher instanceof GpuLauncher gpu) {
            long largest = built.attention().maxWorkGroupSize(device.deviceId);
            if (largest < gpu.group()) {
                throw new FsException(device.device.name() + " runs attention over a " + types + " KV cache in "
                        + "work-groups of at most " + largest + ", fewer than the " + gpu.group()
                        + " of the f32 one; use an f32 KV cache or --backend cpu");
            }
        }
        return built;
    }

    @Override
    public Set<KvCacheType> kvCacheTypes() {
        return EnumSet.allOf(KvCacheType.class);
    }

    @Override
    public void embed(Weight table, int[] tokenIds, Buffer out) {
        ClWeight t = own(table);
        ClBuffer o = own(out);
        requireLength(o, tokenIds.length * t.columns(), "embed output");
        for (int token : tokenIds) BackendChecks.checkToken(t, token);
        if (tokenIds.length == 0) return;
        if (tokens == null || tokens.length() < tokenIds.length) {
            tokens = buffer("token ids", Math.max(tokenIds.length, 256));
        }
        // A blocking write: the queue is idle here anyway (the previous step ended with read or argmax).
        MemorySegment ids = staging.atLeast((long) tokenIds.length * Integer.BYTES);
        MemorySegment.copy(tokenIds, 0, ids, ValueLayout.JAVA_INT, 0, tokenIds.length);
        ClStatus.check(clEnqueueWriteBuffer(queue, tokens.handle(), CL_TRUE(), 0, (long) tokenIds.length * Integer.BYTES,
                ids, 0, MemorySegment.NULL, MemorySegment.NULL), "clEnqueueWriteBuffer(token ids)");
        queueDrained();
        if (isBlockFormat(t.dtype())) {
            kernels.blocks(t.dtype()).embed(queue, t, tokens, tokenIds.length, (int) t.columns(), o);
        } else {
            kernels.weights(t.dtype()).embed().arg(0, t).arg(1, tokens).arg(2, o).arg(3, (int) t.columns())
                    .run(queue, t.columns(), tokenIds.length, 0, 0);
        }
    }

    @Override
    public void rmsNorm(Buffer x, Weight gamma, Buffer out, int rows, float eps) {
        ClWeight g = own(gamma);
        int width = (int) g.columns();
        ClBuffer in = own(x), o = own(out);
        requireLength(in, (long) rows * width, "rmsNorm input");
        requireLength(o, (long) rows * width, "rmsNorm output");
        if (rows == 0) return;
        launcher.rmsNorm(kernels.weights(g.dtype()).rmsNorm(), in, g, o, rows, width, eps);
    }

    @Override
    public void matmul(Buffer x, Weight w, Buffer out, int rows) {
        ClWeight weight = own(w);
        int n = Math.toIntExact(weight.rows());
        int k = Math.toIntExact(weight.columns());
        ClBuffer in = own(x), o = own(out);
        requireLength(in, (long) rows * k, "matmul input");
        requireLength(o, (long) rows * n, "matmul output");
        if (rows == 0) return;
        if (isBlockFormat(weight.dtype())) {
            blockMatmul(in, weight, o, rows, k, n);
            return;
        }
        KernelCache.WeightKernels dense = kernels.weights(weight.dtype());
        if (rows == 1) {
            launcher.matmulDecode(dense.matmulDecode(), KernelConstants.DENSE_CHUNK, in, weight, o, k, n);
        } else {
            launcher.matmulRows(dense.matmulRows(), in, weight, o, rows, k, n, 0, n);
        }
    }

    /**
     * A block-format weight's matmul. Decode reads the blocks where they lie (bound by memory, it gains from their
     * size); prefill goes a panel at a time ({@link PanelMatmul}).
     */
    private void blockMatmul(ClBuffer in, ClWeight weight, ClBuffer o, int rows, int k, int n) {
        BlockKernels blocks = kernels.blocks(weight.dtype());
        if (rows == 1) {
            launcher.matmulDecode(blocks.matmulDecode(), KernelConstants.PIECE, in, weight, o, k, n);
            return;
        }
        panels.run(blocks, kernels.weights(DType.F32).matmulRows(), in, weight, o, rows, k, n);
    }

    @Override
    public void rope(Buffer x, RowPositions placed, int heads, Rope rope) {
        ClBuffer in = own(x);
        int headDim = rope.headDim();
        int rows = placed.rows();
        requireLength(in, (long) rows * heads * headDim, "rope input");
        if (rows == 0) return;
        launcher.rope(ropeKernel, in, ropeFrequencies(rope), positions.of(placed), rows, heads, headDim,
                (float) rope.attentionFactor());
    }

    @Override
    public void storeKv(KvCache cache, int layer, Buffer k, Buffer v, RowPositions placed) {
        ClKvCache c = own(cache);
        int kvDim = c.kvHeads() * c.headDim();
        int rows = placed.rows();
        long length = (long) rows * kvDim;
        BackendChecks.checkPositions(c, layer, placed, "storeKv");
        ClBuffer keys = own(k), values = own(v);
        requireLength(keys, length, "storeKv keys");
        requireLength(values, length, "storeKv values");
        if (rows == 0) return;
        ClBuffer rowPositions = positions.of(placed);
        store(c.kernels().storeKeys(), c.types().keys(), keys, c.keys().get(layer), rowPositions, kvDim,
                c.contextLength(), rows);
        store(c.kernels().storeValues(), c.types().values(), values, c.values().get(layer), rowPositions, kvDim,
                c.contextLength(), rows);
    }

    /**
     * {@code store_<type>}: work-item (i, r) stores element i of row r, or block i for a type stored in blocks (a
     * block is a head's share of a row only: q8_0 heads are whole blocks).
     */
    private void store(ClKernel kernel, KvCacheType type, ClBuffer rows, ClBytes cache, ClBuffer rowPositions,
            int kvDim, int contextLength, int count) {
        kernel.arg(0, rows).arg(1, cache).arg(2, rowPositions).arg(3, kvDim).arg(4, contextLength)
                .run(queue, kvDim / type.storage().blockElements(), count, 0, 0);
    }

    @Override
    public void attention(Buffer q, KvCache cache, int layer, Buffer out, RowPositions placed, int heads) {
        ClKvCache c = own(cache);
        int headDim = c.headDim();
        int rows = placed.rows();
        BackendChecks.checkPositions(c, layer, placed, "attention");
        BackendChecks.checkHeads(heads, c);
        ClBuffer queries = own(q), o = own(out);
        requireLength(queries, (long) rows * heads * headDim, "attention queries");
        requireLength(o, (long) rows * heads * headDim, "attention output");
        if (headDim > launcher.maxHeadDim()) {
            throw new IllegalArgumentException("attention: head_dim " + headDim + " is too large");
        }
        if (rows == 0) return;
        float scale = (float) (1.0 / Math.sqrt(headDim));
        launcher.attention(c.kernels().attention(), queries, c.keys().get(layer), c.values().get(layer), o,
                positions.of(placed), rows, heads, c.kvHeads(), headDim, c.contextLength(), scale);
    }

    @Override
    public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
        ClBuffer g = own(gate), u = own(up), o = own(out);
        requireLength(g, length, "siluMul gate");
        requireLength(u, length, "siluMul up");
        requireLength(o, length, "siluMul output");
        if (length == 0) return;
        siluMul.arg(0, g).arg(1, u).arg(2, o).arg(3, length).run(queue, length, 0);
    }

    @Override
    public void add(Buffer x, Buffer y, long length) {
        ClBuffer a = own(x), b = own(y);
        requireLength(a, length, "add target");
        requireLength(b, length, "add source");
        if (length == 0) return;
        add.arg(0, a).arg(1, b).arg(2, length).run(queue, length, 0);
    }

    /**
     * Per chosen expert, one {@link #matmul} over the slots that chose it: their input rows gathered into scratch (by
     * buffer copies, a run of consecutive rows in one), the matmul into scratch, its rows copied to their slots. An
     * expert whose input rows are already x's first rows reads x itself, and one whose slots are out's first rows
     * writes out itself (a decode step's expert of slot 0, or the down projection's with one expert per row).
     */
    @Override
    public void matmulExperts(Buffer x, boolean xPerSlot, List<Weight> experts, ExpertRouting routing, Buffer out) {
        ClBuffer in = own(x), o = own(out);
        if (experts.size() != routing.expertCount()) {
            throw new IllegalArgumentException("a routing among " + routing.expertCount() + " experts given "
                    + experts.size() + " expert weights");
        }
        List<ClWeight> weights = new ArrayList<>(experts.size());
        for (Weight expert : experts) weights.add(own(expert));
        ClWeight first = weights.getFirst();
        for (int e = 1; e < weights.size(); e++) {
            ClWeight w = weights.get(e);
            if (w.rows() != first.rows() || w.columns() != first.columns()) {
                throw new IllegalArgumentException("expert " + e + " is " + w.rows() + "x" + w.columns()
                        + ", expert 0 " + first.rows() + "x" + first.columns());
            }
        }
        int k = Math.toIntExact(first.columns()), n = Math.toIntExact(first.rows());
        requireLength(in, (long) (xPerSlot ? routing.slots() : routing.rows()) * k, "expert matmul input");
        requireLength(o, (long) routing.slots() * n, "expert matmul output");
        int used = routing.used();
        for (int e = 0; e < routing.expertCount(); e++) {
            int start = routing.groupStart(e), count = routing.groupEnd(e) - start;
            if (count == 0) continue;
            boolean inPlace = true, outPlace = true;
            for (int i = 0; i < count; i++) {
                int slot = routing.groupedSlot(start + i);
                inPlace &= (xPerSlot ? slot : slot / used) == i;
                outPlace &= slot == i;
            }
            ClBuffer gathered = in;
            if (!inPlace) {
                gathered = expertInput = expertScratch(expertInput, (long) count * k, "expert matmul input rows");
                copyRows(routing, start, count, k, true, xPerSlot, in, gathered);
            }
            ClBuffer result = outPlace ? o
                    : (expertOutput = expertScratch(expertOutput, (long) count * n, "expert matmul output rows"));
            matmul(gathered, weights.get(e), result, count);
            if (!outPlace) copyRows(routing, start, count, n, false, true, result, o);
        }
    }

    /**
     * Copies the rows of width {@code width} of expert group {@code [start, start + count)} between the group's
     * scratch (row i) and the slots' buffer (row of slot, or of its input row unless {@code perSlot}), a run of rows
     * consecutive on both sides in one copy: gathers into {@code to} when {@code gather}, else scatters from
     * {@code from}.
     */
    private void copyRows(ExpertRouting routing, int start, int count, int width, boolean gather, boolean perSlot,
            ClBuffer from, ClBuffer to) {
        int run = 0;
        long runRow = 0;
        for (int i = 0; i <= count; i++) {
            long row = -1;
            if (i < count) {
                int slot = routing.groupedSlot(start + i);
                row = perSlot ? slot : slot / routing.used();
                if (run > 0 && row == runRow + run) {
                    run++;
                    continue;
                }
            }
            if (run > 0) {
                long scratchRow = i - run;
                long fromRow = gather ? runRow : scratchRow, toRow = gather ? scratchRow : runRow;
                copy(from, fromRow * width, to, toRow * width, (long) run * width);
            }
            runRow = row;
            run = 1;
        }
    }

    /** {@code current} if it holds {@code length} floats, else a larger one in its place (which is released). */
    private ClBuffer expertScratch(ClBuffer current, long length, String what) {
        if (current != null && current.length() >= length) return current;
        long grown = Math.max(length, current == null ? 0 : 2 * current.length());
        if (current != null) release(current);
        return buffer(what, grown);
    }

    /**
     * Each row's weighted sum of its slots in sum_experts (activations.cl), the slot weights written to the device for
     * the call ({@link FloatsUpload}).
     */
    @Override
    public void sumExperts(Buffer slots, ExpertRouting routing, Buffer out, int width) {
        ClBuffer s = own(slots), o = own(out);
        requireLength(s, (long) routing.slots() * width, "expert sum input");
        requireLength(o, (long) routing.rows() * width, "expert sum output");
        if (routing.rows() == 0 || width == 0) return;
        float[] weights = new float[routing.slots()];
        for (int slot = 0; slot < weights.length; slot++) weights[slot] = routing.weight(slot);
        ClBuffer w = slotWeights.of(weights, weights.length);
        sumExperts.arg(0, s).arg(1, w).arg(2, o).arg(3, routing.used()).arg(4, width)
                .run(queue, width, routing.rows(), 0, 0);
    }

    @Override
    public void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length) {
        ClBuffer from = own(src), to = own(dst);
        requireRange(from, srcOffset, length, "copy source");
        requireRange(to, dstOffset, length, "copy destination");
        if (length == 0) return;
        ClStatus.check(clEnqueueCopyBuffer(queue, from.handle(), to.handle(), srcOffset * Float.BYTES,
                dstOffset * Float.BYTES, length * Float.BYTES, 0, MemorySegment.NULL, MemorySegment.NULL),
                "clEnqueueCopyBuffer");
    }

    /**
     * A blocking read straight into {@code dst} when it is off-heap memory (at the bus's speed when it is
     * {@link #pinnedStaging}); an array's memory, which the driver cannot take, is read through the staging.
     */
    @Override
    public void read(Buffer src, long offset, MemorySegment dst) {
        ClBuffer from = own(src);
        long bytes = BackendChecks.floatsIn(dst, "read destination") * Float.BYTES;
        requireRange(from, offset, bytes / Float.BYTES, "read source");
        if (bytes == 0) return;
        MemorySegment host = dst.isNative() ? dst : staging.atLeast(bytes);
        ClStatus.check(clEnqueueReadBuffer(queue, from.handle(), CL_TRUE(), offset * Float.BYTES, bytes, host, 0,
                MemorySegment.NULL, MemorySegment.NULL), "clEnqueueReadBuffer");
        queueDrained();
        if (host != dst) MemorySegment.copy(host, 0, dst, 0, bytes);
    }

    /** A blocking write, so that {@code src} may be reused at once; an array's memory goes through the staging. */
    @Override
    public void write(MemorySegment src, Buffer dst, long offset) {
        ClBuffer to = own(dst);
        long bytes = BackendChecks.floatsIn(src, "write source") * Float.BYTES;
        requireRange(to, offset, bytes / Float.BYTES, "write destination");
        if (bytes == 0) return;
        MemorySegment host = src;
        if (!src.isNative()) host = staging.atLeast(bytes).copyFrom(src);
        ClStatus.check(clEnqueueWriteBuffer(queue, to.handle(), CL_TRUE(), offset * Float.BYTES, bytes, host, 0,
                MemorySegment.NULL, MemorySegment.NULL), "clEnqueueWriteBuffer");
        queueDrained();
    }

    /** The page-locked staging that reads and writes of arrays' memory also go through. */
    @Override
    public Optional<MemorySegment> pinnedStaging(long bytes) {
        checkOpen();
        return Optional.of(staging.atLeast(bytes));
    }

    @Override
    public int argmax(Buffer x, long offset, int length) {
        ClBuffer in = own(x);
        requireRange(in, offset, length, "argmax input");
        if (length <= 0) throw new IllegalArgumentException("argmax of no elements");
        int group = launcher.argmaxGroup();
        argmax.arg(0, in).arg(1, offset).arg(2, length).arg(3, argmaxResult).local(4, (long) group * Float.BYTES)
                .local(5, (long) group * Integer.BYTES).run(queue, group, group);
        ClStatus.check(clEnqueueReadBuffer(queue, argmaxResult.handle(), CL_TRUE(), 0, Integer.BYTES, scratch, 0,
                MemorySegment.NULL, MemorySegment.NULL), "clEnqueueReadBuffer(argmax)");
        queueDrained();
        return scratch.get(ValueLayout.JAVA_INT, 0);
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        staging.close();
        positions.close();
        clFinish(queue);
        kernels.release();
        memObjects.forEach(m -> clReleaseMemObject(m));
        memObjects.clear();
        clReleaseCommandQueue(queue);
        slotWeights.close();
        arena.close();
    }

    /** The largest power of two up to GPU_GROUP that the device and these kernels allow. */
    private int groupSize(ClKernel... users) {
        long limit = Math.min(GPU_GROUP, device.device.maxWorkGroupSize());
        for (ClKernel user : users) limit = Math.min(limit, user.maxWorkGroupSize(device.deviceId));
        return Integer.highestOneBit((int) Math.max(1, limit));
    }

    private ClBuffer ropeFrequencies(Rope rope) {
        for (RopeFrequencies f : ropeFrequencies) {
            if (f.rope().equals(rope)) return f.inverse();
        }
        double[] frequencies = rope.inverseFrequencies();
        float[] inverse = new float[frequencies.length];
        for (int i = 0; i < inverse.length; i++) inverse[i] = (float) frequencies[i];
        ClBuffer buffer = buffer("RoPE frequencies", inverse.length);
        try (Arena host = Arena.ofConfined()) {
            MemorySegment values = host.allocateFrom(ValueLayout.JAVA_FLOAT, inverse);
            ClStatus.check(clEnqueueWriteBuffer(queue, buffer.handle(), CL_TRUE(), 0, values.byteSize(), values, 0,
                    MemorySegment.NULL, MemorySegment.NULL), "clEnqueueWriteBuffer(RoPE frequencies)");
        }
        ropeFrequencies.add(new RopeFrequencies(rope, buffer));
        return buffer;
    }

    /** A blocking call on the queue has returned: the uploads it ran are done. */
    private void queueDrained() {
        positions.queueDrained();
        slotWeights.queueDrained();
    }

    /**
     * Releases a buffer of {@link #buffer} and its count against the device's memory; commands already enqueued on it
     * still run (OpenCL frees it after them).
     */
    private void release(ClBuffer buffer) {
        memObjects.remove(buffer.handle());
        ClStatus.check(clReleaseMemObject(buffer.handle()), "clReleaseMemObject");
        memory.release(Math.max(1, buffer.length()) * Float.BYTES);
    }

    /** A zero-filled float buffer, counted against the device's memory. */
    private ClBuffer buffer(String what, long length) {
        return new ClBuffer(zeroFilled(what, Math.max(1, length) * Float.BYTES), length, this);
    }

    /** A zero-filled buffer of {@code bytes}, counted against the device's memory. */
    private ClBytes bytes(String what, long bytes) {
        return new ClBytes(zeroFilled(what, bytes), bytes);
    }

    private MemorySegment zeroFilled(String what, long bytes) {
        memory.reserve(what, bytes);
        MemorySegment handle = createBuffer(CL_MEM_READ_WRITE(), bytes, MemorySegment.NULL, what);
        // filled a float at a time, or a byte at a time where the size is not whole floats (a q8_0 cache's may not be)
        long pattern = bytes % Float.BYTES == 0 ? Float.BYTES : 1;
        scratch.set(ValueLayout.JAVA_FLOAT, 0, 0f);
        // drivers that allocate lazily run out of memory here, at the buffer's first use
        checkAllocation(clEnqueueFillBuffer(queue, handle, scratch, pattern, 0, bytes, 0, MemorySegment.NULL,
                MemorySegment.NULL), "clEnqueueFillBuffer(" + what + ")", bytes, handle);
        return handle;
    }

    private MemorySegment createBuffer(long flags, long bytes, MemorySegment host, String what) {
        MemorySegment status = scratch;
        MemorySegment handle = clCreateBuffer(device.context, flags, bytes, host, status);
        checkAllocation(status.get(ValueLayout.JAVA_INT, 0), "clCreateBuffer(" + what + ", " + HumanSize.of(bytes)
                + ")", bytes, MemorySegment.NULL);
        memObjects.add(handle);
        return handle;
    }

    /**
     * {@link ClStatus#check}, but the driver's out of memory for an allocation of {@code bytes}, already counted in
     * {@link #memory}, is a {@link DeviceOutOfMemoryException} at what was in use before it, the allocation undone
     * (its {@code handle} released when it was created).
     */
    private void checkAllocation(int code, String call, long bytes, MemorySegment handle) {
        if (code == CL_MEM_OBJECT_ALLOCATION_FAILURE() || code == CL_OUT_OF_RESOURCES()) {
            if (!handle.equals(MemorySegment.NULL)) {
                memObjects.remove(handle);
                clReleaseMemObject(handle);
            }
            memory.release(bytes);
            throw new DeviceOutOfMemoryException("OpenCL " + call + " failed: " + ClStatus.describe(code)
                    + ": the device is out of memory at " + HumanSize.of(memory.reserved()) + " in use",
                    memory.reserved());
        }
        ClStatus.check(code, call);
    }

    private void checkOpen() {
        if (closed) throw new IllegalStateException("the OpenCL backend is closed");
    }

    private ClBuffer own(Buffer buffer) {
        checkOpen();
        if (buffer instanceof ClBuffer b && b.owner() == this) return b;
        throw new IllegalArgumentException("not a buffer of this OpenCL backend: " + buffer);
    }

    private ClWeight own(Weight weight) {
        checkOpen();
        if (weight instanceof ClWeight w && w.owner() == this) return w;
        throw new IllegalArgumentException("not a weight of this OpenCL backend: " + weight);
    }

    private ClKvCache own(KvCache cache) {
        checkOpen();
        if (cache instanceof ClKvCache c && c.owner() == this) return c;
        throw new IllegalArgumentException("not a KV cache of this OpenCL backend: " + cache);
    }
}
