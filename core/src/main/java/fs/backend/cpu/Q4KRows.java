package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.F;
import static fs.backend.cpu.QuantBlocks.L;
import static fs.backend.cpu.QuantBlocks.bytes;
import static fs.backend.cpu.QuantBlocks.floats;
import static fs.backend.cpu.QuantBlocks.half;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;

/**
 * Q4_K rows (layout in {@link fs.format.ReferenceDequantizer}): blocks of 256 weights in 8 groups of 32, each run of
 * 32 quant bytes holding two groups, one per nibble. A chunk of bytes is read once for both of its groups; a weight
 * is {@code fma(q, d·scale, −dmin·min)}, which rounds once, as the reference's {@code (d·scale)·q − dmin·min} does
 * after its exact product. The high nibble is taken in place as {@code q & 0xF0} = 16·q, against the scale times
 * 2^-4: both factors are exact (d·scale is at least 2^-24, far from float32's subnormals), so the product and the
 * weight are the same floats, and the shift it saves is a tenth of the chunk's vector work. One chunk per step into two accumulators: with C2 of JDK 25, a step of two chunks into
 * four accumulators (whether the quants were read from the segment or from a copy of the row in an array), or a run
 * read as one 256-bit vector and widened in two halves (convertShape part 1), made it box the vectors: 20–40 MB
 * allocated per 1024-row matrix-vector product and 6–15× slower (QuantDotBench with -prof gc).
 */
final class Q4KRows implements RowFormat {
    private static final int BLOCK = DType.Q4_K.blockElements();
    private static final int BLOCK_BYTES = DType.Q4_K.blockBytes();

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        float[] scales = new float[16];
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at), dmin = half(w, at + 2);
            QuantBlocks.scalesAndMins(w, at + 4, d, dmin, scales);
            for (int run = 0; run < 4; run++) {
                FloatVector lowScale = FloatVector.broadcast(F, scales[2 * run]);
                FloatVector lowMin = FloatVector.broadcast(F, scales[8 + 2 * run]);
                FloatVector highScale = FloatVector.broadcast(F, scales[2 * run + 1] * 0x1p-4f);
                FloatVector highMin = FloatVector.broadcast(F, scales[8 + 2 * run + 1]);
                int xRun = xOffset + BLOCK * b + 64 * run;
                for (int c = 0; c < 32; c += L) {
                    IntVector q = bytes(w, at + 16 + 32 * run + c);
                    FloatVector w0 = floats(q.and(0xF)).fma(lowScale, lowMin);
                    FloatVector w1 = floats(q.and(0xF0)).fma(highScale, highMin);
                    acc0 = w0.fma(FloatVector.fromArray(F, x, xRun + c), acc0);
                    acc1 = w1.fma(FloatVector.fromArray(F, x, xRun + 32 + c), acc1);
                }
            }
        }
        acc0.add(acc1).intoArray(lanes, 0);
        return MatmulKernels.sumLanes(lanes, 0);
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        float[] scales = new float[16];
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at), dmin = half(w, at + 2);
            QuantBlocks.scalesAndMins(w, at + 4, d, dmin, scales);
            for (int run = 0; run < 4; run++) { // as dot: each chunk of quant bytes read once for both its groups
                FloatVector lowScale = FloatVector.broadcast(F, scales[2 * run]);
                FloatVector lowMin = FloatVector.broadcast(F, scales[8 + 2 * run]);
                FloatVector highScale = FloatVector.broadcast(F, scales[2 * run + 1] * 0x1p-4f);
                FloatVector highMin = FloatVector.broadcast(F, scales[8 + 2 * run + 1]);
                int o = outOffset + BLOCK * b + 64 * run;
                for (int c = 0; c < 32; c += L) {
                    IntVector q = bytes(w, at + 16 + 32 * run + c);
                    floats(q.and(0xF)).fma(lowScale, lowMin).intoArray(out, o + c);
                    floats(q.and(0xF0)).fma(highScale, highMin).intoArray(out, o + 32 + c);
                }
            }
        }
    }
}
