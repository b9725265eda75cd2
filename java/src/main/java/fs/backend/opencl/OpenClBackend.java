package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Qwen3 ops on one OpenCL device. Weights are uploaded once in their stored dtype; activations and the KV cache
 * stay on the device, and only {@link #read} and {@link #argmax} wait for the queue. Not thread-safe: one thread
 * drives a backend.
 */
public final class OpenClBackend implements Backend {
    private static final String BUILD_OPTIONS = "-cl-std=CL1.2";
    /** Work-group size of the GPU design's reductions (a power of two, capped by what the device allows). */
    private static final int GPU_GROUP = 256;
    /** Work-items per work-group of the CPU design: enough groups to spread over the device's cores. */
    private static final int CPU_GROUP = 16;
    private static final int TILE = 16;
    private static final int ROW_BLOCK = 4;
    /** attention_gpu gives each work-item at most this many output dims, attention_cpu handles at most 256. */
    private static final int ATTENTION_DIMS_PER_ITEM = 4;
    private static final int CPU_MAX_HEAD_DIM = 256;

    record ClBuffer(MemorySegment handle, long length, OpenClBackend owner) implements Buffer, ClMemory {}

    record ClWeight(String name, DType dtype, long rows, long columns, MemorySegment handle, OpenClBackend owner)
            implements Weight, ClMemory {}

    record ClKvCache(int layers, int contextLength, int kvHeads, int headDim, List<ClBuffer> keys, List<ClBuffer> values,
            OpenClBackend owner) implements KvCache {}

    /** Kernels of weights.cl built for one weight dtype. */
    private record WeightKernels(ClKernel embed, ClKernel rmsNorm, ClKernel matmulDecode, ClKernel matmulRows) {}

    private final DeviceContext device;
    private final KernelDesign design;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment queue;
    private final DeviceMemory memory;
    private final List<MemorySegment> memObjects = new ArrayList<>();
    private final List<ClKernel> kernels = new ArrayList<>();
    private final Map<DType, WeightKernels> weightKernels = new EnumMap<>(DType.class);
    private final Map<String, ClBuffer> ropeFrequencies = new HashMap<>();
    private final ClKernel rope;
    private final ClKernel storeKv;
    private final ClKernel attention;
    private final ClKernel siluMul;
    private final ClKernel add;
    private final ClKernel argmax;
    private final int group;
    private final MemorySegment scratch;
    private ClBuffer tokens;
    private final ClBuffer argmaxResult;
    private boolean closed;

    /** A backend on {@code device} (from {@link OpenCl#select}), with the kernel design that suits its type. */
    public OpenClBackend(OpenCl.Device device) {
        this(device, KernelDesign.of(device));
    }

    /** Tests force a design to run both on PoCL. */
    OpenClBackend(OpenCl.Device device, KernelDesign design) {
        this.device = DeviceContext.of(device);
        this.design = design;
        this.memory = new DeviceMemory(device.name(), device.globalMemSize(), device.maxAllocSize());
        this.scratch = arena.allocate(ValueLayout.JAVA_LONG);
        MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
        this.queue = clCreateCommandQueue(this.device.context, this.device.deviceId, 0, status);
        ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateCommandQueue(" + device.name() + ")");
        MemorySegment program = this.device.program("activations.cl", BUILD_OPTIONS);
        this.rope = kernel(program, "rope");
        this.storeKv = kernel(program, "store_kv");
        this.attention = kernel(program, design == KernelDesign.GPU ? "attention_gpu" : "attention_cpu");
        this.siluMul = kernel(program, "silu_mul");
        this.add = kernel(program, "add");
        this.argmax = kernel(program, "argmax");
        this.group = design == KernelDesign.GPU ? groupSize(attention, argmax) : 1;
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

    @Override
    public Weight upload(Tensor tensor) {
        checkOpen();
        if (!tensor.dtype().isComputeType() || tensor.rank() < 1 || tensor.rank() > 2) {
            throw new FsException("cannot upload " + tensor + ": weights are rank 1 or 2 in F32, F16 or BF16");
        }
        long rows = tensor.rank() == 2 ? tensor.dim(0) : 1;
        long columns = tensor.dim(tensor.rank() - 1);
        long bytes = tensor.data().byteSize();
        memory.reserve(tensor.name(), bytes);
        MemorySegment handle;
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment host = tensor.data().isNative() ? tensor.data()
                    : staging.allocate(bytes, 16).copyFrom(tensor.data());
            handle = createBuffer(CL_MEM_READ_ONLY() | CL_MEM_COPY_HOST_PTR(), bytes, host, tensor.name());
        }
        return new ClWeight(tensor.name(), tensor.dtype(), rows, columns, handle, this);
    }

    @Override
    public Buffer allocate(long length) {
        checkOpen();
        return buffer("activation buffer of " + length + " floats", length);
    }

    @Override
    public KvCache allocateKvCache(int layers, int contextLength, int kvHeads, int headDim) {
        checkOpen();
        long length = (long) contextLength * kvHeads * headDim;
        List<ClBuffer> keys = new ArrayList<>();
        List<ClBuffer> values = new ArrayList<>();
        for (int layer = 0; layer < layers; layer++) {
            keys.add(buffer("KV cache (keys of layer " + layer + ", --ctx " + contextLength + ")", length));
            values.add(buffer("KV cache (values of layer " + layer + ", --ctx " + contextLength + ")", length));
        }
        return new ClKvCache(layers, contextLength, kvHeads, headDim, List.copyOf(keys), List.copyOf(values), this);
    }

    @Override
    public void embed(Weight table, int[] tokenIds, Buffer out) {
        ClWeight t = own(table);
        ClBuffer o = own(out);
        require(o.length() >= tokenIds.length * t.columns(), "embed output too small");
        for (int token : tokenIds) {
            if (token < 0 || token >= t.rows()) {
                throw new FsException("token id " + token + " is outside the vocabulary of " + t.name() + " (0.."
                        + (t.rows() - 1) + ")");
            }
        }
        if (tokenIds.length == 0) return;
        if (tokens == null || tokens.length() < tokenIds.length) {
            tokens = buffer("token ids", Math.max(tokenIds.length, 256));
        }
        // A blocking write: the queue is idle here anyway (the previous step ended with read or argmax).
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment ids = staging.allocateFrom(ValueLayout.JAVA_INT, tokenIds);
            ClStatus.check(clEnqueueWriteBuffer(queue, tokens.handle(), CL_TRUE(), 0, ids.byteSize(), ids, 0,
                    MemorySegment.NULL, MemorySegment.NULL), "clEnqueueWriteBuffer(token ids)");
        }
        kernelsFor(t.dtype()).embed().args(t, tokens, o, (int) t.columns())
                .run(queue, new long[] {t.columns(), tokenIds.length}, null);
    }

    @Override
    public void rmsNorm(Buffer x, Weight gamma, Buffer out, int rows, float eps) {
        ClWeight g = own(gamma);
        int width = (int) g.columns();
        require(own(x).length() >= (long) rows * width && own(out).length() >= (long) rows * width,
                "rmsNorm buffers too small");
        if (rows == 0) return;
        ClKernel kernel = kernelsFor(g.dtype()).rmsNorm();
        if (design == KernelDesign.GPU) {
            kernel.args(x, g, out, width, eps, new ClKernel.Local((long) group * Float.BYTES))
                    .run(queue, new long[] {(long) rows * group}, new long[] {group});
        } else {
            kernel.args(x, g, out, width, eps, rows).run(queue, new long[] {roundUp(rows, CPU_GROUP)},
                    new long[] {CPU_GROUP});
        }
    }

    @Override
    public void matmul(Buffer x, Weight w, Buffer out, int rows) {
        ClWeight weight = own(w);
        int n = Math.toIntExact(weight.rows());
        int k = Math.toIntExact(weight.columns());
        require(own(x).length() >= (long) rows * k && own(out).length() >= (long) rows * n, "matmul buffers too small");
        if (rows == 0) return;
        WeightKernels kernels = kernelsFor(weight.dtype());
        if (design == KernelDesign.GPU && rows == 1) {
            kernels.matmulDecode().args(x, weight, out, k, new ClKernel.Local((long) group * Float.BYTES))
                    .run(queue, new long[] {(long) n * group}, new long[] {group});
        } else if (design == KernelDesign.GPU) {
            kernels.matmulRows().args(x, weight, out, rows, k, n)
                    .run(queue, new long[] {roundUp(n, TILE), roundUp(rows, TILE)}, new long[] {TILE, TILE});
        } else if (rows == 1) {
            kernels.matmulDecode().args(x, weight, out, k, n)
                    .run(queue, new long[] {roundUp(n, CPU_GROUP)}, new long[] {CPU_GROUP});
        } else {
            kernels.matmulRows().args(x, weight, out, rows, k, n)
                    .run(queue, new long[] {roundUp(n, CPU_GROUP), (rows + ROW_BLOCK - 1) / ROW_BLOCK},
                            new long[] {CPU_GROUP, 1});
        }
    }

    @Override
    public void rope(Buffer x, int rows, int heads, int headDim, int startPos, float theta) {
        require(own(x).length() >= (long) rows * heads * headDim && headDim % 2 == 0, "rope: bad shape");
        if (rows == 0) return;
        rope.args(x, ropeFrequencies(headDim, theta), heads, headDim, startPos)
                .run(queue, new long[] {headDim / 2, heads, rows}, null);
    }

    @Override
    public void storeKv(KvCache cache, int layer, Buffer k, Buffer v, int rows, int startPos) {
        ClKvCache c = own(cache);
        long kvDim = (long) c.kvHeads() * c.headDim();
        long length = rows * kvDim;
        require(startPos >= 0 && startPos + rows <= c.contextLength(), "storeKv: positions " + startPos + ".."
                + (startPos + rows - 1) + " are outside the cache of " + c.contextLength());
        require(own(k).length() >= length && own(v).length() >= length, "storeKv buffers too small");
        if (rows == 0) return;
        storeKv.args(k, v, c.keys().get(layer), c.values().get(layer), startPos * kvDim, Math.toIntExact(length))
                .run(queue, new long[] {length}, null);
    }

    @Override
    public void attention(Buffer q, KvCache cache, int layer, Buffer out, int rows, int startPos, int heads) {
        ClKvCache c = own(cache);
        int headDim = c.headDim();
        require(heads % c.kvHeads() == 0, "attention: " + heads + " heads is not a multiple of " + c.kvHeads());
        require(startPos + rows <= c.contextLength(), "attention: positions beyond the cache");
        require(own(q).length() >= (long) rows * heads * headDim && own(out).length() >= (long) rows * heads * headDim,
                "attention buffers too small");
        if (rows == 0) return;
        float scale = (float) (1.0 / Math.sqrt(headDim));
        ClBuffer keys = c.keys().get(layer);
        ClBuffer values = c.values().get(layer);
        if (design == KernelDesign.GPU) {
            require(headDim <= ATTENTION_DIMS_PER_ITEM * group, "attention: head_dim " + headDim + " is too large");
            attention.args(q, keys, values, out, heads, c.kvHeads(), headDim, startPos, scale,
                    new ClKernel.Local((long) headDim * Float.BYTES), new ClKernel.Local((long) group * Float.BYTES),
                    new ClKernel.Local((long) group * Float.BYTES))
                    .run(queue, new long[] {(long) heads * group, rows}, new long[] {group, 1});
        } else {
            require(headDim <= CPU_MAX_HEAD_DIM, "attention: head_dim " + headDim + " is too large");
            attention.args(q, keys, values, out, heads, c.kvHeads(), headDim, startPos, scale)
                    .run(queue, new long[] {heads, rows}, new long[] {1, 1});
        }
    }

    @Override
    public void siluMul(Buffer gate, Buffer up, Buffer out, long length) {
        require(own(gate).length() >= length && own(up).length() >= length && own(out).length() >= length,
                "siluMul buffers too small");
        if (length == 0) return;
        siluMul.args(gate, up, out, length).run(queue, new long[] {length}, null);
    }

    @Override
    public void add(Buffer x, Buffer y, long length) {
        require(own(x).length() >= length && own(y).length() >= length, "add buffers too small");
        if (length == 0) return;
        add.args(x, y, length).run(queue, new long[] {length}, null);
    }

    @Override
    public void copy(Buffer src, long srcOffset, Buffer dst, long dstOffset, long length) {
        require(srcOffset + length <= own(src).length() && dstOffset + length <= own(dst).length(), "copy out of bounds");
        if (length == 0) return;
        ClStatus.check(clEnqueueCopyBuffer(queue, own(src).handle(), own(dst).handle(), srcOffset * Float.BYTES,
                dstOffset * Float.BYTES, length * Float.BYTES, 0, MemorySegment.NULL, MemorySegment.NULL),
                "clEnqueueCopyBuffer");
    }

    @Override
    public void read(Buffer src, long offset, float[] dst) {
        require(offset + dst.length <= own(src).length(), "read out of bounds");
        if (dst.length == 0) return;
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment host = staging.allocate(ValueLayout.JAVA_FLOAT, dst.length);
            ClStatus.check(clEnqueueReadBuffer(queue, own(src).handle(), CL_TRUE(), offset * Float.BYTES,
                    host.byteSize(), host, 0, MemorySegment.NULL, MemorySegment.NULL), "clEnqueueReadBuffer");
            MemorySegment.copy(host, ValueLayout.JAVA_FLOAT, 0, dst, 0, dst.length);
        }
    }

    @Override
    public int argmax(Buffer x, long offset, int length) {
        require(length > 0 && offset + length <= own(x).length(), "argmax out of bounds");
        argmax.args(x, offset, length, argmaxResult, new ClKernel.Local((long) group * Float.BYTES),
                new ClKernel.Local((long) group * Integer.BYTES)).run(queue, new long[] {group}, new long[] {group});
        ClStatus.check(clEnqueueReadBuffer(queue, argmaxResult.handle(), CL_TRUE(), 0, Integer.BYTES, scratch, 0,
                MemorySegment.NULL, MemorySegment.NULL), "clEnqueueReadBuffer(argmax)");
        return scratch.get(ValueLayout.JAVA_INT, 0);
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        clFinish(queue);
        kernels.forEach(ClKernel::release);
        weightKernels.clear();
        memObjects.forEach(m -> clReleaseMemObject(m));
        memObjects.clear();
        clReleaseCommandQueue(queue);
        arena.close();
    }

    private WeightKernels kernelsFor(DType dtype) {
        return weightKernels.computeIfAbsent(dtype, d -> {
            MemorySegment program = device.program("weights.cl", BUILD_OPTIONS + " -D W_" + d.name());
            boolean gpu = design == KernelDesign.GPU;
            return new WeightKernels(kernel(program, "embed"), kernel(program, gpu ? "rmsnorm_gpu" : "rmsnorm_cpu"),
                    kernel(program, gpu ? "matmul_decode_gpu" : "matmul_decode_cpu"),
                    kernel(program, gpu ? "matmul_tiled_gpu" : "matmul_cpu"));
        });
    }

    private ClKernel kernel(MemorySegment program, String name) {
        ClKernel kernel = new ClKernel(program, name, arena);
        kernels.add(kernel);
        return kernel;
    }

    /** The largest power of two up to GPU_GROUP that the device and these kernels allow. */
    private int groupSize(ClKernel... users) {
        long limit = Math.min(GPU_GROUP, device.device.maxWorkGroupSize());
        for (ClKernel user : users) limit = Math.min(limit, user.maxWorkGroupSize(device.deviceId));
        return Integer.highestOneBit((int) Math.max(1, limit));
    }

    private ClBuffer ropeFrequencies(int headDim, float theta) {
        return ropeFrequencies.computeIfAbsent(headDim + "/" + theta, key -> {
            float[] inverse = new float[headDim / 2];
            for (int i = 0; i < inverse.length; i++) inverse[i] = (float) (1.0 / Math.pow(theta, 2.0 * i / headDim));
            ClBuffer buffer = buffer("RoPE frequencies", inverse.length);
            try (Arena staging = Arena.ofConfined()) {
                MemorySegment host = staging.allocateFrom(ValueLayout.JAVA_FLOAT, inverse);
                ClStatus.check(clEnqueueWriteBuffer(queue, buffer.handle(), CL_TRUE(), 0, host.byteSize(), host, 0,
                        MemorySegment.NULL, MemorySegment.NULL), "clEnqueueWriteBuffer(RoPE frequencies)");
            }
            return buffer;
        });
    }

    /** A zero-filled float buffer, counted against the device's memory. */
    private ClBuffer buffer(String what, long length) {
        long bytes = Math.max(1, length) * Float.BYTES;
        memory.reserve(what, bytes);
        MemorySegment handle = createBuffer(CL_MEM_READ_WRITE(), bytes, MemorySegment.NULL, what);
        scratch.set(ValueLayout.JAVA_FLOAT, 0, 0f);
        ClStatus.check(clEnqueueFillBuffer(queue, handle, scratch, Float.BYTES, 0, bytes, 0, MemorySegment.NULL,
                MemorySegment.NULL), "clEnqueueFillBuffer(" + what + ")");
        return new ClBuffer(handle, length, this);
    }

    private MemorySegment createBuffer(long flags, long bytes, MemorySegment host, String what) {
        MemorySegment status = scratch;
        MemorySegment handle = clCreateBuffer(device.context, flags, bytes, host, status);
        ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateBuffer(" + what + ", "
                + DeviceMemory.size(bytes) + ")");
        memObjects.add(handle);
        return handle;
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

    private static void require(boolean condition, String message) {
        if (!condition) throw new IllegalArgumentException(message);
    }

    private static long roundUp(long value, long multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }
}
