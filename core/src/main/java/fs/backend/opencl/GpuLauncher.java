package fs.backend.opencl;

import java.lang.foreign.MemorySegment;

/**
 * The GPU design's launches: work-groups of {@code group} work-items (a power of two) that reduce in local memory,
 * and WG×WG tiles for the matmul over many rows.
 */
record GpuLauncher(MemorySegment queue, int group) implements Launcher {
    /** A decode work-group no narrower than this, however short the row (a warp or wavefront's worth). */
    private static final int MIN_DECODE_GROUP = 32;

    @Override
    public int argmaxGroup() {
        return group;
    }

    @Override
    public void rmsNorm(ClKernel kernel, ClMemory x, ClMemory gamma, ClMemory out, int rows, int width, float eps) {
        kernel.arg(0, x).arg(1, gamma).arg(2, out).arg(3, width).arg(4, eps).local(5, (long) group * Float.BYTES)
                .run(queue, (long) rows * group, group);
    }

    @Override
    public void matmulDecode(ClKernel kernel, int chunk, ClMemory x, ClMemory w, ClMemory out, int k, int n) {
        // one work-group per output, no wider than the row has chunks (K = 1024 gives 128 of 8 bf16)
        long width = Math.min(group, Math.max(MIN_DECODE_GROUP, Long.highestOneBit((k + chunk - 1) / chunk)));
        kernel.arg(0, x).arg(1, w).arg(2, out).arg(3, k).local(4, width * Float.BYTES).run(queue, n * width, width);
    }

    @Override
    public void matmulRows(ClKernel kernel, ClMemory x, ClMemory w, ClMemory out, int rows, int k, int n,
            int firstOutput, int outStride) {
        int tile = KernelConstants.TILE;
        int wg = KernelConstants.WG;
        kernel.arg(0, x).arg(1, w).arg(2, out).arg(3, rows).arg(4, k).arg(5, n).arg(6, firstOutput).arg(7, outStride)
                .run(queue, roundUp(n, tile) / tile * wg, roundUp(rows, tile) / tile * wg, wg, wg);
    }

    @Override
    public void rope(ClKernel kernel, ClMemory x, ClMemory inverseFrequencies, ClMemory rowPositions, int rows,
            int heads, int headDim, float attentionFactor) {
        kernel.arg(0, x).arg(1, inverseFrequencies).arg(2, rowPositions).arg(3, heads).arg(4, headDim)
                .arg(5, attentionFactor).run(queue, headDim / 2, heads, rows);
    }

    @Override
    public int maxHeadDim() {
        return KernelConstants.ATTENTION_DIMS_PER_ITEM * group;
    }

    @Override
    public void attention(ClKernel kernel, ClMemory q, ClMemory keys, ClMemory values, ClMemory out,
            ClMemory rowPositions, int rows, int heads, int kvHeads, int headDim, int contextLength, float scale) {
        kernel.arg(0, q).arg(1, keys).arg(2, values).arg(3, out).arg(4, rowPositions).arg(5, heads).arg(6, kvHeads)
                .arg(7, headDim).arg(8, contextLength).arg(9, scale).local(10, (long) headDim * Float.BYTES)
                .local(11, (long) group * Float.BYTES).local(12, (long) group * Float.BYTES)
                .run(queue, (long) heads * group, rows, group, 1);
    }

    private static long roundUp(long value, long multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }
}
