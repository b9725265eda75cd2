package fs.backend.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * What the kernels of the block-quantized row formats share: their vector shape, the widening of packed bytes to int
 * lanes, f16 scales, and one fixed order of summing lanes.
 *
 * <p>A chunk is {@link #L} consecutive weights, 8 or 16: every sub-block of these formats (16 or 32 weights) is a
 * whole number of chunks, so a chunk never straddles two scales. The weights' bits are taken apart with shifts and
 * masks on int lanes that each hold one byte ({@link #bytes}), which keeps the weights in row order: the input row
 * is read as it is, with no permutation. Each weight is then exactly the float the reference computes (every product
 * of these formats is exact in float32, see {@link fs.quant.ReferenceDequantizer}), so dequantization is bit-exact
 * and a dot product differs from the exact one by its float32 summation only.
 */
final class QuantBlocks {
    /** The preferred shape where it has 8 or 16 floats; otherwise 256 bits. */
    static final VectorSpecies<Float> F =
            FloatVector.SPECIES_PREFERRED.length() >= 16 ? FloatVector.SPECIES_512 : FloatVector.SPECIES_256;
    static final int L = F.length();
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(8 * L));
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);

    private QuantBlocks() {}

    /**
     * The L bytes at {@code at}, one per int lane, sign-extended: callers mask the bits they take, so the sign bits
     * never reach a weight.
     */
    static IntVector bytes(MemorySegment w, long at) {
        return (IntVector) ByteVector.fromMemorySegment(B, w, at, LE).convertShape(VectorOperators.B2I, I, 0);
    }

    static FloatVector floats(IntVector v) {
        return (FloatVector) v.convert(VectorOperators.I2F, 0);
    }

    static float half(MemorySegment w, long at) {
        return Float.float16ToFloat(w.get(HALF, at));
    }

    static int u8(MemorySegment w, long at) {
        return Byte.toUnsignedInt(w.get(ValueLayout.JAVA_BYTE, at));
    }

    /**
     * The lanes' sum in one fixed pairwise order (lane i plus lane i + L/2, and so on down to one), so that a row's
     * dot product is the same float whether the code runs interpreted or compiled (the Vector API's reduceLanes
     * leaves its order open).
     */
    static float sum(FloatVector v) {
        float[] lanes = new float[L];
        v.intoArray(lanes, 0);
        for (int half = L / 2; half >= 1; half /= 2) {
            for (int i = 0; i < half; i++) lanes[i] += lanes[i + half];
        }
        return lanes[0];
    }

    /**
     * The 6-bit scale (low byte of the result) and min (second byte) of group {@code group} (0..7) of a Q4_K or Q5_K
     * block whose 12 scale bytes are {@code first8} (bytes 0..7, little-endian) and {@code last4} (bytes 8..11): groups
     * 0..3 use the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); groups 4..7 take their low 4 bits from the
     * nibbles of bytes 8..11 and their top 2 bits from the spare top bits of bytes 0..3 (scales) and 4..7 (mins). The
     * bytes are read in two loads per block rather than one per field, as these scalar steps otherwise cost as much
     * as the block's vector work.
     */
    static int scaleAndMin(long first8, int last4, int group) {
        if (group < 4) return (int) (first8 >>> 8 * group) & 0x3F | ((int) (first8 >>> 8 * group + 32) & 0x3F) << 8;
        int low = last4 >>> 8 * (group - 4);
        int scale = low & 0xF | ((int) (first8 >>> 8 * (group - 4) + 6) & 3) << 4;
        int min = low >>> 4 & 0xF | ((int) (first8 >>> 8 * (group - 4) + 38) & 3) << 4;
        return scale | min << 8;
    }
}
