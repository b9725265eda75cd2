package fs.backend.cpu;

import java.lang.foreign.MemorySegment;

/**
 * A tiled format whose few-rows kernel reads two weight rows where they lie, decoding each weight vector in
 * registers once for all the tile's input rows, instead of decoding the rows into an array first (for bf16 the
 * decoded row's stores halved the read bandwidth: 5–7 GB/s on one thread against 10 for plain loads).
 */
interface InPlaceRowTiles extends TiledRows {
    /**
     * Weight rows at byte offsets {@code w0} and {@code w1} against {@code inputRows} (1, 2, 4 or 8) input rows loaded by
     * {@link #loadInput} at {@code x0 + j·xStride}: the outputs of input row j go to {@code out + o0 + j·oStride}
     * and {@code out + o1 + j·oStride}, each the float {@link #tile1} gives. {@code lanes} is scratch of
     * {@link DecodedRowTiles#LANES_SCRATCH} floats.
     */
    void tile2(MemorySegment w, long w0, long w1, float[] x, int x0, int xStride, int inputRows, int k, float[] lanes,
               MemorySegment out, long o0, long o1, long oStride);
}
