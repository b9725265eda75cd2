package fs.backend.opencl;

import fs.backend.KvCacheTypes;
import fs.tensor.DType;

/**
 * The sizes that kernels and the Java code launching them must agree on. They are kept here only: every program is
 * built with them as -D defines ({@link #OPTIONS}), and a kernel file refuses to build without them, or with another
 * value where its code is spelled out for one.
 */
final class KernelConstants {
    /** matmul_rows_gpu: each work-group computes TILE×TILE outputs with WG×WG work-items. */
    static final int TILE = 64;
    static final int WG = 16;
    /** matmul_decode_gpu on F32, F16 and BF16 weights: a work-item's share of a row is chunks of this many weights. */
    static final int DENSE_CHUNK = 8;
    /** The block formats' kernels decode and multiply a block in pieces of this many weights. */
    static final int PIECE = 32;
    /** matmul_rows_cpu: outputs per work-item (each over every input row). */
    static final int OUT_BLOCK = 4;
    /** attention_gpu: the most output dims per work-item. */
    static final int ATTENTION_DIMS_PER_ITEM = 4;
    /** attention_cpu: the largest head_dim (its accumulator is a private array). */
    static final int MAX_HEAD_DIM = 256;

    /** Options of every build: OpenCL C 1.2 and the constants above. */
    static final String OPTIONS = "-cl-std=CL1.2" + define("TILE", TILE) + define("WG", WG)
            + define("DENSE_CHUNK", DENSE_CHUNK) + define("PIECE", PIECE) + define("OUT_BLOCK", OUT_BLOCK)
            + define("ATTENTION_DIMS_PER_ITEM", ATTENTION_DIMS_PER_ITEM) + define("MAX_HEAD_DIM", MAX_HEAD_DIM);

    private KernelConstants() {}

    /** Options of blocks.cl for {@code type}: its block geometry from its descriptor, which its header checks. */
    static String blockFormatOptions(DType type) {
        return OPTIONS + define("BLOCK_ELEMENTS", type.blockElements()) + define("BLOCK_BYTES", type.blockBytes());
    }

    /**
     * Options of kv_cache.cl for a cache of {@code types}: the types of its keys and values (their labels, which name
     * the kernels' loads), and q8_0's block geometry from its descriptor, which the file checks.
     */
    static String kvCacheOptions(KvCacheTypes types) {
        return OPTIONS + " -D K_TYPE=" + types.keys().label() + " -D V_TYPE=" + types.values().label()
                + define("Q8_0_BLOCK_ELEMENTS", DType.Q8_0.blockElements())
                + define("Q8_0_BLOCK_BYTES", DType.Q8_0.blockBytes());
    }

    private static String define(String name, int value) {
        return " -D " + name + "=" + value;
    }
}
