package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.LE;
import static fs.backend.cpu.MatmulKernels.SHORT;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0 rows: blocks of 32 weights, an f16 scale d then 16 bytes whose low nibbles are weights 0..15 and high nibbles
 * weights 16..31, y = (q − 8)·d. The nibbles are split with a mask and a shift of whole byte vectors, so the low and
 * the high halves land in lanes in weight order with no shuffle; q − 8 is taken in bytes, widened to floats and
 * multiplied with the float32 activations, and each block's sum times d goes into the row's accumulator. Needs
 * L ≤ 16 (a half block of at least one vector).
 */
final class Q4_0Rows implements TiledRows {
    static final Q4_0Rows INSTANCE = new Q4_0Rows();

    private static final int BLOCK = 32;
    private static final int HALF = BLOCK / 2;
    private static final int BLOCK_BYTES = 18;
    /** The nibble bytes one load splits: L of them, or 8 (the narrowest byte vector) split into L-lane parts. */
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, 8 * L)));
    private static final int STEP = B.length();
    private static final int PARTS = STEP / L;

    private Q4_0Rows() {}

    static boolean fitsVectors() {
        return L <= HALF;
    }

    private static FloatVector widen(ByteVector q, int part) {
        return (FloatVector) q.convertShape(VectorOperators.B2F, F, part);
    }

    private static ByteVector low(ByteVector q) {
        return q.and((byte) 0x0F).sub((byte) 8);
    }

    private static ByteVector high(ByteVector q) {
        return q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
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
                    widen(lo, p).mul(d).intoArray(out, o + i + p * L);
                    widen(hi, p).mul(d).intoArray(out, o + HALF + i + p * L);
                }
            }
        }
    }

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k) {
        return tile1(w, rowOffset, x, xOffset, k, MatmulKernels.dotLanes());
    }

    @Override
    public float tile1(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < k / BLOCK; b++) {
            long at = rowOffset + (long) b * BLOCK_BYTES;
            int xb = xOffset + b * BLOCK;
            FloatVector s = FloatVector.zero(F);
            for (int i = 0; i < HALF; i += STEP) {
                ByteVector q = ByteVector.fromMemorySegment(B, w, at + 2 + i, LE);
                ByteVector lo = low(q), hi = high(q);
                for (int p = 0; p < PARTS; p++) {
                    s = widen(lo, p).fma(FloatVector.fromArray(F, x, xb + i + p * L), s);
                    s = widen(hi, p).fma(FloatVector.fromArray(F, x, xb + HALF + i + p * L), s);
                }
            }
            acc = s.fma(scale(w, at), acc);
        }
        acc.intoArray(lanes, 0);
        return MatmulKernels.sumLanes(lanes, 0);
    }

    @Override
    public void tile4(MemorySegment w, long w0, long wStride, float[] x, int xOffset, int k, MemorySegment out, long o0,
                      long oStride, float[] lanes) {
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int b = 0; b < k / BLOCK; b++) {
            long at = (long) b * BLOCK_BYTES;
            int xb = xOffset + b * BLOCK;
            FloatVector s0 = FloatVector.zero(F), s1 = s0, s2 = s0, s3 = s0;
            for (int i = 0; i < HALF; i += STEP) {
                long q = at + 2 + i;
                ByteVector q0 = ByteVector.fromMemorySegment(B, w, w0 + q, LE);
                ByteVector q1 = ByteVector.fromMemorySegment(B, w, w1 + q, LE);
                ByteVector q2 = ByteVector.fromMemorySegment(B, w, w2 + q, LE);
                ByteVector q3 = ByteVector.fromMemorySegment(B, w, w3 + q, LE);
                ByteVector lo0 = low(q0), lo1 = low(q1), lo2 = low(q2), lo3 = low(q3);
                ByteVector hi0 = high(q0), hi1 = high(q1), hi2 = high(q2), hi3 = high(q3);
                for (int p = 0; p < PARTS; p++) {
                    // Each row's sum takes the low half then the high half of a part, as tile1 does.
                    FloatVector xl = FloatVector.fromArray(F, x, xb + i + p * L);
                    FloatVector xh = FloatVector.fromArray(F, x, xb + HALF + i + p * L);
                    s0 = widen(hi0, p).fma(xh, widen(lo0, p).fma(xl, s0));
                    s1 = widen(hi1, p).fma(xh, widen(lo1, p).fma(xl, s1));
                    s2 = widen(hi2, p).fma(xh, widen(lo2, p).fma(xl, s2));
                    s3 = widen(hi3, p).fma(xh, widen(lo3, p).fma(xl, s3));
                }
            }
            a0 = s0.fma(scale(w, w0 + at), a0);
            a1 = s1.fma(scale(w, w1 + at), a1);
            a2 = s2.fma(scale(w, w2 + at), a2);
            a3 = s3.fma(scale(w, w3 + at), a3);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        for (int i = 0; i < 4; i++) out.set(FLOAT, o0 + i * oStride, MatmulKernels.sumLanes(lanes, i * L));
    }
}
