package fs.backend.opencl;

import java.lang.foreign.MemorySegment;

/**
 * The CPU design's launches: work-items that each own whole rows (or a head of a row), no barriers and no local
 * memory, in work-groups only as large as it takes to spread them over the device's cores.
 */
record CpuLauncher(MemorySegment queue) implements Launcher {
    /** Work-items per work-group where the kernel does not care: enough groups to keep every core busy. */
    private static final int GROUP = 16;

    @Override
    public int argmaxGroup() {
        return 1;
    }

    @Override
    public void rmsNorm(ClKernel kernel, ClMemory x, ClMemory gamma, ClMemory out, int rows, int width, float eps) {
        kernel.arg(0, x).arg(1, gamma).arg(2, out).arg(3, width).arg(4, eps).arg(5, rows)
                .run(queue, roundUp(rows, GROUP), GROUP);
    }

    @Override
    public void matmulDecode(ClKernel kernel, int chunk, ClMemory x, ClMemory w, ClMemory out, int k, int n) {
        kernel.arg(0, x).arg(1, w).arg(2, out).arg(3, k).arg(4, n).run(queue, roundUp(n, GROUP), GROUP);
    }

    @Override
    public void matmulRows(ClKernel kernel, ClMemory x, ClMemory w, ClMemory out, int rows, int k, int n,
            int firstOutput, int outStride) {
        int outBlock = KernelConstants.OUT_BLOCK;
        kernel.arg(0, x).arg(1, w).arg(2, out).arg(3, rows).arg(4, k).arg(5, n).arg(6, firstOutput).arg(7, outStride)
                .run(queue, (n + outBlock - 1) / outBlock, 1);
    }

    @Override
    public void rope(ClKernel kernel, ClMemory x, ClMemory inverseFrequencies, ClMemory rowPositions, int rows,
            int heads, int headDim, float attentionFactor) {
        kernel.arg(0, x).arg(1, inverseFrequencies).arg(2, rowPositions).arg(3, heads).arg(4, headDim)
                .arg(5, attentionFactor).run(queue, rows, 1);
    }

    @Override
    public int maxHeadDim() {
        return KernelConstants.MAX_HEAD_DIM;
    }

    @Override
    public void attention(ClKernel kernel, ClMemory q, ClMemory keys, ClMemory values, ClMemory out,
            ClMemory rowPositions, int rows, int heads, int kvHeads, int headDim, int contextLength, float scale) {
        kernel.arg(0, q).arg(1, keys).arg(2, values).arg(3, out).arg(4, rowPositions).arg(5, heads).arg(6, kvHeads)
                .arg(7, headDim).arg(8, contextLength).arg(9, scale).run(queue, heads, rows, 1, 1);
    }

    private static long roundUp(long value, long multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }
}
