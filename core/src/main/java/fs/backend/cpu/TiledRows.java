package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.FLOAT;

import java.lang.foreign.MemorySegment;

/**
 * A row format with a one-row matmul faster than a {@link #dot} per row: a tile of four rows shares each load of the
 * input, and the input may be laid out the way the format's kernels read it best. A tile's output for a row is the
 * same float as {@link #tile1}'s, so which rows share a tile never changes a result.
 */
interface TiledRows extends RowFormat {
    /** Copies an input row of k floats from src (bytes) to dst as the tiles read it; by default in order. */
    default void loadInput(MemorySegment src, long srcOffset, float[] dst, int dstOffset, int k) {
        MemorySegment.copy(src, FLOAT, srcOffset, dst, dstOffset, k);
    }

    /**
     * Four rows (byte offsets {@code w0 + i·wStride}) against one input row loaded by {@link #loadInput}; the four
     * outputs go to {@code out + o0 + i·oStride}. {@code lanes} is scratch of {@link MatmulKernels#LANES_SCRATCH}.
     */
    void tile4(MemorySegment w, long w0, long wStride, float[] x, int xOffset, int k, MemorySegment out, long o0,
               long oStride, float[] lanes);

    /** One row against an input row loaded by {@link #loadInput}: what {@link #tile4} computes for each of its rows. */
    float tile1(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes);

    /**
     * The row's k values laid out as {@link #loadInput} lays out an input row, into out[outOffset, +k): the few-rows
     * kernels ({@link DecodedRowTiles}) dot it with inputs so loaded and compute {@link #tile1}'s floats.
     */
    void decodeAsLoaded(MemorySegment w, long rowOffset, int k, float[] out, int outOffset);

    /** Where {@link #tile1}'s vector part of a row of k ends and its scalar tail begins. */
    int tileVectorPart(int k);
}
