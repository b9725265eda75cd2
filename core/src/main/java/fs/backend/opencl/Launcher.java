package fs.backend.opencl;

/**
 * How one {@link KernelDesign} runs the ops whose kernels differ between designs. Such an op has a kernel per design,
 * named for it ({@link KernelDesign#kernel}); the launcher sets all its arguments and chooses its sizes. The ops with
 * one kernel for every design (embed, {@code store_<type>}, silu_mul, add, argmax) are launched by OpenClBackend
 * itself.
 */
sealed interface Launcher permits GpuLauncher, CpuLauncher {
    /** Work-items of argmax's single work-group. */
    int argmaxGroup();

    /** rmsnorm_*: {@code rows} rows of {@code width}. */
    void rmsNorm(ClKernel kernel, ClMemory x, ClMemory gamma, ClMemory out, int rows, int width, float eps);

    /**
     * matmul_decode_* (weights.cl's or blocks.cl's): out = W·x for one input row, W {@code n}×{@code k}; a work-item
     * of the GPU design steps through a row {@code chunk} weights at a time.
     */
    void matmulDecode(ClKernel kernel, int chunk, ClMemory x, ClMemory w, ClMemory out, int k, int n);

    /**
     * matmul_rows_*: x·Wᵀ for {@code rows} input rows and W {@code n}×{@code k}, output j of row r at
     * {@code out[r * outStride + firstOutput + j]}, so that a matmul can be run one panel of W's rows at a time.
     */
    void matmulRows(ClKernel kernel, ClMemory x, ClMemory w, ClMemory out, int rows, int k, int n, int firstOutput,
            int outStride);

    /**
     * rope_*: rotates {@code heads} heads of {@code headDim} in each of {@code rows} rows, in place, row r by the
     * angles of its position (the x of {@code rowPositions}' int2 r).
     */
    void rope(ClKernel kernel, ClMemory x, ClMemory inverseFrequencies, ClMemory rowPositions, int rows, int heads,
            int headDim, float attentionFactor);

    /** The largest head_dim that attention_* handles. */
    int maxHeadDim();

    /**
     * attention_*: causal GQA of {@code rows} query rows over one layer's cache of sequences of {@code contextLength}
     * positions; row r sees positions 0..x of its sequence y, (x, y) being {@code rowPositions}' int2 r.
     */
    void attention(ClKernel kernel, ClMemory q, ClMemory keys, ClMemory values, ClMemory out, ClMemory rowPositions,
            int rows, int heads, int kvHeads, int headDim, int contextLength, float scale);
}
