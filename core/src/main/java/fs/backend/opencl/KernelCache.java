package fs.backend.opencl;

import fs.backend.KvCacheTypes;
import fs.tensor.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The kernels of one backend: each built on first use (a weight dtype's when a weight of it is first run, a KV cache
 * type pair's when a cache of it is first allocated) and kept until {@link #release}, which releases every one.
 */
final class KernelCache {
    /** Kernels of weights.cl built for one weight dtype. */
    record WeightKernels(ClKernel embed, ClKernel rmsNorm, ClKernel matmulDecode, ClKernel matmulRows) {}

    /**
     * Kernels of kv_cache.cl built for a cache's key and value types: the store of each ({@code store_<type>}, one
     * kernel object each, so that keys and values of one type keep their own arguments) and the design's attention.
     */
    record KvCacheKernels(ClKernel storeKeys, ClKernel storeValues, ClKernel attention) {}

    private final DeviceContext device;
    private final KernelDesign design;
    private final Arena arena = Arena.ofShared();
    private final List<ClKernel> kernels = new ArrayList<>();
    private final Map<DType, WeightKernels> weightKernels = new EnumMap<>(DType.class);
    private final Map<DType, BlockKernels> blockKernels = new EnumMap<>(DType.class);
    private final Map<KvCacheTypes, KvCacheKernels> kvCacheKernels = new HashMap<>();

    KernelCache(DeviceContext device, KernelDesign design) {
        this.device = device;
        this.design = design;
    }

    /** Kernel {@code name} of {@code program}, released with the others. */
    ClKernel kernel(MemorySegment program, String name) {
        ClKernel kernel = new ClKernel(program, name, arena);
        kernels.add(kernel);
        return kernel;
    }

    /** weights.cl's kernels for a dense weight dtype. */
    WeightKernels weights(DType dtype) {
        WeightKernels built = weightKernels.get(dtype);
        if (built != null) return built;
        MemorySegment program = device.program("weights.cl", KernelConstants.OPTIONS + " -D W_" + dtype.name());
        built = new WeightKernels(kernel(program, "embed"), kernel(program, design.kernel("rmsnorm")),
                kernel(program, design.kernel("matmul_decode")), kernel(program, design.kernel("matmul_rows")));
        weightKernels.put(dtype, built);
        return built;
    }

    /** blocks.cl's kernels for a block format. */
    BlockKernels blocks(DType dtype) {
        BlockKernels built = blockKernels.get(dtype);
        if (built == null) {
            built = BlockKernels.build(device, design, dtype, this::kernel);
            blockKernels.put(dtype, built);
        }
        return built;
    }

    /** kv_cache.cl's kernels for a cache of {@code types}. */
    KvCacheKernels kvCache(KvCacheTypes types) {
        KvCacheKernels built = kvCacheKernels.get(types);
        if (built != null) return built;
        MemorySegment program = device.program("kv_cache.cl", KernelConstants.kvCacheOptions(types));
        built = new KvCacheKernels(kernel(program, "store_" + types.keys().label()),
                kernel(program, "store_" + types.values().label()), kernel(program, design.kernel("attention")));
        kvCacheKernels.put(types, built);
        return built;
    }

    /** Releases every kernel; the queue must be finished. */
    void release() {
        kernels.forEach(ClKernel::release);
        kernels.clear();
        weightKernels.clear();
        blockKernels.clear();
        kvCacheKernels.clear();
        arena.close();
    }
}
