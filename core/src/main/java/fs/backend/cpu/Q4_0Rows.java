package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.LE;
import static fs.backend.cpu.MatmulKernels.SHORT;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0 rows: blocks of 32 weights, an f16 scale d then 16 bytes whose low nibbles are weights 0..15 and high nibbles
 * weights 16..31, y = (q − 8)·d. The nibbles are split with a mask and a shift of whole vectors, so the low and the
 * high halves land in lanes in weight order with no shuffle (the shift is of ints: x86 has no byte shift). The offset
 * is factored out of the dot, Σ (q − 8)·x = Σ q·x − 8·Σ x (a byte subtract of the 8 measured 3× slower than the
 * rest of the kernel), and each block's sum times d goes into the row's accumulator. Needs L ≤ 16 (a half block of
 * at least one vector).
 *
 * <p>No four-row tile: one written like {@link Bf16Rows}'s (sharing each load of x) measured 5-10× slower than a
 * dot per row, helpers written out or not; C2 apparently gives up on vectors in it (boxing), as MatmulKernels warns.
 */
final class Q4_0Rows implements RowFormat {
    static final Q4_0Rows INSTANCE = new Q4_0Rows();

    private static final int BLOCK = DType.Q4_0.blockElements();
    private static final int HALF = BLOCK / 2;
    private static final int BLOCK_BYTES = DType.Q4_0.blockBytes();
    /** The nibble bytes one load splits: L of them, or 8 (the narrowest byte vector) split into L-lane parts. */
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, 8 * L)));
    private static final int STEP = B.length();
    private static final int PARTS = STEP / L;
    private static final FloatVector MINUS_EIGHT = FloatVector.broadcast(F, -8f);
    private static final byte LOW = 0x0F;

    private Q4_0Rows() {}

    static boolean fitsVectors() {
        return L <= HALF;
    }

    private static FloatVector widen(ByteVector q, int part) {
        return (FloatVector) q.convertShape(VectorOperators.B2F, F, part);
    }

    private static ByteVector low(ByteVector q) {
        return q.and(LOW);
    }

    /** The high nibbles, shifted down within ints; the bits each byte gains from its neighbour are masked off. */
    private static ByteVector high(ByteVector q) {
        return q.reinterpretAsInts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and(LOW);
    }

    private static FloatVector scale(MemorySegment w, long block) {
        return FloatVector.broadcast(F, Float.float16ToFloat(w.get(SHORT, block)));
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            FloatVector d = scale(w, at);
            int o = outOffset + b * BLOCK;
            for (int i = 0; i < HALF; i += STEP) {
                ByteVector q = ByteVector.fromMemorySegment(B, w, at + 2 + i, LE);
                ByteVector lo = low(q), hi = high(q);
                for (int p = 0; p < PARTS; p++) {
                    widen(lo, p).sub(8f).mul(d).intoArray(out, o + i + p * L);
                    widen(hi, p).sub(8f).mul(d).intoArray(out, o + HALF + i + p * L);
                }
            }
        }
    }

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            int xb = xOffset + b * BLOCK;
            FloatVector s = FloatVector.zero(F), sx = s;
            for (int i = 0; i < HALF; i += STEP) {
                ByteVector q = ByteVector.fromMemorySegment(B, w, at + 2 + i, LE);
                ByteVector lo = low(q), hi = high(q);
                for (int p = 0; p < PARTS; p++) {
                    FloatVector xl = FloatVector.fromArray(F, x, xb + i + p * L);
                    FloatVector xh = FloatVector.fromArray(F, x, xb + HALF + i + p * L);
                    sx = sx.add(xl).add(xh);
                    s = widen(hi, p).fma(xh, widen(lo, p).fma(xl, s));
                }
            }
            acc = sx.fma(MINUS_EIGHT, s).fma(scale(w, at), acc);
        }
        acc.intoArray(lanes, 0);
        return MatmulKernels.sumLanes(lanes, 0);
    }
}
