package fs.backend.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * What the kernels of the block-quantized row formats share: their vector shape, the widening of packed bytes to int
 * lanes, f16 scales, and the scale packing Q4_K and Q5_K have in common.
 *
 * <p>A chunk is {@link #L} consecutive weights, 4, 8 or 16 (the machine's float vector, as {@link MatmulKernels#L}:
 * the kernels sum their lanes with its {@link MatmulKernels#sumLanes}): every sub-block of these formats (16 or 32
 * weights) is a whole number of chunks, so a chunk never straddles two scales. The weights' bits are taken apart with shifts and
 * masks on int lanes that each hold one byte ({@link #bytes}), which keeps the weights in row order: the input row
 * is read as it is, with no permutation. Each weight is then exactly the float the reference computes (every product
 * of these formats is exact in float32, see {@link fs.format.ReferenceDequantizer}), so dequantization is bit-exact
 * and a dot product differs from the exact one by its float32 summation only.
 */
final class QuantBlocks {
    static final VectorSpecies<Float> F = MatmulKernels.F;
    static final int L = F.length();
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    /**
     * 128-bit vectors (NEON, SSE, -XX:MaxVectorSize=16): four bytes fill a chunk, and there is no 32-bit byte vector
     * to load them as, so they are read as one int and spread over the lanes; the 8-lane conversions are done in two
     * halves, as a 256-bit vector there would run in the Vector API's Java fallback.
     */
    private static final boolean NARROW = L == 4;
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, 8 * L)));
    private static final IntVector SPREAD_SHIFTS = IntVector.fromArray(I, new int[] {0, 8, 16, 24, 0, 8, 16, 24,
            0, 8, 16, 24, 0, 8, 16, 24}, 0);
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    /** {@link #eightBytes}' vectors: lanes 0..3 hold a long's low int, lanes 4..7 its high one, each shifted to a byte. */
    private static final VectorSpecies<Integer> I8 = IntVector.SPECIES_256;
    private static final IntVector ZERO8 = IntVector.zero(I8);
    private static final VectorMask<Integer> LOW4 = VectorMask.fromLong(I8, 0x0F);
    private static final VectorMask<Integer> HIGH4 = VectorMask.fromLong(I8, 0xF0);
    private static final IntVector BYTE_SHIFTS = IntVector.fromArray(I8, new int[] {0, 8, 16, 24, 0, 8, 16, 24}, 0);

    private QuantBlocks() {}

    /**
     * The L bytes at {@code at}, one per int lane, sign-extended: callers mask the bits they take, so the sign bits
     * never reach a weight.
     */
    static IntVector bytes(MemorySegment w, long at) {
        if (NARROW) return spread(w.get(U32, at));
        return (IntVector) ByteVector.fromMemorySegment(B, w, at, LE).convertShape(VectorOperators.B2I, I, 0);
    }

    /** The four bytes of {@code word}, low byte first, one per lane of a 4-lane vector (unsigned). */
    private static IntVector spread(int word) {
        return IntVector.broadcast(I, word).lanewise(VectorOperators.LSHR, SPREAD_SHIFTS).and(0xFF);
    }

    /** {@code (byte i of packed − bias)·scale} for i = 0..7 in two 4-lane halves ({@link #NARROW} machines). */
    private static void eightBytesNarrow(long packed, int bias, float scale, float[] out, int at) {
        ((FloatVector) spread((int) packed).sub(bias).convert(VectorOperators.I2F, 0)).mul(scale).intoArray(out, at);
        ((FloatVector) spread((int) (packed >>> 32)).sub(bias).convert(VectorOperators.I2F, 0)).mul(scale)
                .intoArray(out, at + 4);
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
     * d·scale of the 8 groups of a Q4_K or Q5_K block into {@code out[0..8)} and −dmin·min into {@code out[8..16)},
     * from its 12 scale bytes at {@code at}: groups 0..3 use the low 6 bits of bytes 0..3 (scales) and 4..7 (mins);
     * groups 4..7 take their low 4 bits from the nibbles of bytes 8..11 and their top 2 bits from the spare top bits
     * of bytes 0..3 (scales) and 4..7 (mins). The 6-bit values are put together 8 to a long and converted in vectors
     * of 8 ({@link #eightBytes}): one scalar decode per group cost as much as the group's 32 weights.
     */
    static void scalesAndMins(MemorySegment w, long at, float d, float dmin, float[] out) {
        long first8 = w.get(U64, at);
        long last4 = Integer.toUnsignedLong(w.get(U32, at + 8));
        long low4 = first8 & 0xFFFFFFFFL, high4 = first8 >>> 32;
        long scales = low4 & 0x3F3F3F3FL | (last4 & 0x0F0F0F0FL | (low4 >>> 6 & 0x03030303L) << 4) << 32;
        long mins = high4 & 0x3F3F3F3FL | (last4 >>> 4 & 0x0F0F0F0FL | (high4 >>> 6 & 0x03030303L) << 4) << 32;
        if (NARROW) {
            eightBytesNarrow(scales, 0, d, out, 0);
            eightBytesNarrow(mins, 0, -dmin, out, 8);
            return;
        }
        // eightBytes twice, written out: C2 declined to inline it into some compilations of the dot ("too big"),
        // which left a call per block.
        IntVector s = ZERO8.blend((int) scales, LOW4).blend((int) (scales >>> 32), HIGH4);
        IntVector m = ZERO8.blend((int) mins, LOW4).blend((int) (mins >>> 32), HIGH4);
        ((FloatVector) s.lanewise(VectorOperators.LSHR, BYTE_SHIFTS).and(0xFF).convert(VectorOperators.I2F, 0))
                .mul(d).intoArray(out, 0);
        ((FloatVector) m.lanewise(VectorOperators.LSHR, BYTE_SHIFTS).and(0xFF).convert(VectorOperators.I2F, 0))
                .mul(-dmin).intoArray(out, 8);
    }

    /**
     * {@code (byte i of packed − bias)·scale} for i = 0..7 (bytes unsigned) into {@code out[at..at + 8)}. Every vector
     * here starts from a constant ({@link #ZERO8}), so C2 knows its class wherever this is inlined: the earlier
     * {@code LongVector.zero(…).withLane(…)} was a virtual call inside the kernels (C2 did not know the class of
     * zero's result), which left its conversion to the Vector API's Java fallback in some compilations and not
     * others (one stream through the scheduler ran at 5–6 tok/s in those runs, 13–15 in the rest).
     */
    static void eightBytes(long packed, int bias, float scale, float[] out, int at) {
        if (NARROW) {
            eightBytesNarrow(packed, bias, scale, out, at);
            return;
        }
        IntVector lanes = ZERO8.blend((int) packed, LOW4).blend((int) (packed >>> 32), HIGH4);
        IntVector values = lanes.lanewise(VectorOperators.LSHR, BYTE_SHIFTS).and(0xFF).sub(bias);
        ((FloatVector) values.convert(VectorOperators.I2F, 0)).mul(scale).intoArray(out, at);
    }
}
