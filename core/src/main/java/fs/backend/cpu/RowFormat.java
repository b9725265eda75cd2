package fs.backend.cpu;

import java.lang.foreign.MemorySegment;

/**
 * How the CPU backend reads the rows of one weight format where they lie (a mapped file or memory), with no float
 * copy of the weight. Implementations are stateless and safe to call from any thread.
 */
interface RowFormat {
    /**
     * Σ_j row[j]·x[xOffset + j] over the k columns of the row that starts at byte rowOffset of w. {@code lanes} is
     * the calling thread's scratch of {@link MatmulKernels#LANES_SCRATCH} floats, where the kernel spills its
     * accumulators to sum their lanes: passed in, since a decode step makes thousands of these calls.
     */
    float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes);

    /** The row's k values, exactly as llama.cpp's reference dequantization gives them, into out[outOffset, +k). */
    void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset);
}
