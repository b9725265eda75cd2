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
 * Q8_0 rows: blocks of 32 weights, an f16 scale d then 32 int8 quants, y = q·d. A dot sums each block's q·x in
 * float lanes (the int8s widened in registers, the activations staying float32) and adds it times d to the row's
 * accumulator: Σ_b d_b·Σ_j q_j·x_j, which is the exact dot up to float32 rounding. Needs L ≤ 32 (a block of at
 * least one vector).
 */
final class Q8_0Rows implements TiledRows {
    static final Q8_0Rows INSTANCE = new Q8_0Rows();

    private static final int BLOCK = 32;
    private static final int BLOCK_BYTES = 34;
    /** The quants one load widens: L of them, or 8 (the narrowest byte vector) split into L-lane parts. */
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, 8 * L)));
    private static final int STEP = B.length();
    private static final int PARTS = STEP / L;

    private Q8_0Rows() {}

    static boolean fitsVectors() {
        return L <= BLOCK;
    }

    private static FloatVector widen(ByteVector q, int part) {
        return (FloatVector) q.convertShape(VectorOperators.B2F, F, part);
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
            for (int i = 0; i < BLOCK; i += STEP) {
                ByteVector q = ByteVector.fromMemorySegment(B, w, at + 2 + i, LE);
                for (int p = 0; p < PARTS; p++) widen(q, p).mul(d).intoArray(out, o + i + p * L);
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
            for (int i = 0; i < BLOCK; i += STEP) {
                ByteVector q = ByteVector.fromMemorySegment(B, w, at + 2 + i, LE);
                for (int p = 0; p < PARTS; p++) s = widen(q, p).fma(FloatVector.fromArray(F, x, xb + i + p * L), s);
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
            for (int i = 0; i < BLOCK; i += STEP) {
                long q = at + 2 + i;
                ByteVector q0 = ByteVector.fromMemorySegment(B, w, w0 + q, LE);
                ByteVector q1 = ByteVector.fromMemorySegment(B, w, w1 + q, LE);
                ByteVector q2 = ByteVector.fromMemorySegment(B, w, w2 + q, LE);
                ByteVector q3 = ByteVector.fromMemorySegment(B, w, w3 + q, LE);
                for (int p = 0; p < PARTS; p++) {
                    FloatVector xv = FloatVector.fromArray(F, x, xb + i + p * L);
                    s0 = widen(q0, p).fma(xv, s0);
                    s1 = widen(q1, p).fma(xv, s1);
                    s2 = widen(q2, p).fma(xv, s2);
                    s3 = widen(q3, p).fma(xv, s3);
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
