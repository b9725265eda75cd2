package fs.backend.cpu;

import static fs.backend.cpu.QuantBlocks.LE;
import static fs.backend.cpu.QuantBlocks.U32;
import static fs.backend.cpu.QuantBlocks.half;

import fs.format.ReferenceDequantizer;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * IQ2_XXS rows (layout in {@link fs.format.ReferenceDequantizer}): every 8 weights are one of 256 grid points of 8
 * magnitudes and one of 128 sign patterns, each an index into a table. Both tables are kept here as floats, 8 per
 * entry (the grid's magnitudes, the signs as ±1), so 8 weights are two vector loads and a product, in 8 lanes
 * whatever the preferred shape. A weight is {@code (magnitude·sign)·db}: the reference's {@code db·magnitude},
 * negated or not, as the products are exact.
 *
 * <p>The tables are read out of {@link ReferenceDequantizer} itself, by decoding blocks that spell every grid point
 * (with db = 1 and no minus signs) and every sign pattern (with the all-8 point), so there is one transcription of
 * the format's data and the two decoders cannot disagree on it.
 */
final class Iq2XxsRows implements RowFormat {
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    private static final int BLOCK = DType.IQ2_XXS.blockElements();
    private static final int BLOCK_BYTES = DType.IQ2_XXS.blockBytes();
    private static final float[] MAGNITUDES = tableOfReference(256, false);
    private static final float[] SIGNS = tableOfReference(128, true);

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at);
            for (int group = 0; group < 8; group++) {
                int grid = w.get(U32, at + 2 + 8 * group);
                int signBits = w.get(U32, at + 6 + 8 * group);
                int xGroup = xOffset + BLOCK * b + 32 * group;
                FloatVector sum = eight(grid, signBits, 0).mul(FloatVector.fromArray(F8, x, xGroup));
                for (int e = 1; e < 4; e++) {
                    sum = eight(grid, signBits, e).fma(FloatVector.fromArray(F8, x, xGroup + 8 * e), sum);
                }
                acc = sum.fma(FloatVector.broadcast(F8, db(d, signBits)), acc);
            }
        }
        return sum(acc, lanes);
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            float d = half(w, at);
            for (int group = 0; group < 8; group++) {
                int grid = w.get(U32, at + 2 + 8 * group);
                int signBits = w.get(U32, at + 6 + 8 * group);
                float db = db(d, signBits);
                for (int e = 0; e < 4; e++) {
                    eight(grid, signBits, e).mul(db).intoArray(out, outOffset + BLOCK * b + 32 * group + 8 * e);
                }
            }
        }
    }

    /** The signed magnitudes of weights 8e..8e+7 of a group. */
    private static FloatVector eight(int grid, int signBits, int e) {
        FloatVector magnitudes = FloatVector.fromArray(F8, MAGNITUDES, 8 * (grid >>> 8 * e & 0xFF));
        return magnitudes.mul(FloatVector.fromArray(F8, SIGNS, 8 * (signBits >>> 7 * e & 0x7F)));
    }

    /** The group's scale: d·(0.5 + s)·0.25 for the 4-bit s in the top of its sign word, in the reference's order. */
    private static float db(float d, int signBits) {
        return d * (0.5f + (signBits >>> 28)) * 0.25f;
    }

    /** The 8 lanes' sum in one fixed pairwise order (the order of {@link MatmulKernels#sumLanes}). */
    private static float sum(FloatVector v, float[] lanes) {
        v.intoArray(lanes, 0);
        float a = lanes[0] + lanes[4], b = lanes[1] + lanes[5], c = lanes[2] + lanes[6], e = lanes[3] + lanes[7];
        return (a + c) + (b + e);
    }

    /**
     * Entries 0..count-1 of the grid ({@code signs} false: the reference's weights with d = 8 and scale 0, so db = 1,
     * and no minus sign) or of the sign patterns (true: the weights of grid point 0, all 8s, divided by 8).
     */
    private static float[] tableOfReference(int count, boolean signs) {
        int blocks = count / 32; // a block's 8 groups spell 4 entries each
        ByteBuffer bytes = ByteBuffer.allocate(blocks * BLOCK_BYTES).order(LE);
        for (int entry = 0; entry < count; entry++) {
            int group = entry / 4 % 8, e = entry % 4;
            int at = entry / 32 * BLOCK_BYTES + 2 + 8 * group;
            bytes.putShort(entry / 32 * BLOCK_BYTES, Float.floatToFloat16(8f));
            if (signs) bytes.putInt(at + 4, bytes.getInt(at + 4) | entry << 7 * e);
            else bytes.putInt(at, bytes.getInt(at) | entry << 8 * e);
        }
        float[] table = new float[8 * count];
        ReferenceDequantizer.decode(DType.IQ2_XXS, MemorySegment.ofBuffer(bytes), table);
        if (signs) for (int i = 0; i < table.length; i++) table[i] /= 8;
        return table;
    }
}
