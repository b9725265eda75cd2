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
 * Q8_0 rows: blocks of 32 weights, an f16 scale d then 32 int8 quants, y = q·d. A dot sums each block's q·x in
 * float lanes (the int8s widened in registers, the activations staying float32) and adds it times d to the row's
 * accumulator: Σ_b d_b·Σ_j q_j·x_j, which is the exact dot up to float32 rounding. Needs L ≤ 32 (a block of at
 * least one vector). A dot per row measured faster than a four-row tile sharing the loads of x.
 */
final class Q8_0Rows implements RowFormat {
    static final Q8_0Rows INSTANCE = new Q8_0Rows();

    private static final int BLOCK = DType.Q8_0.blockElements();
    private static final int BLOCK_BYTES = DType.Q8_0.blockBytes();
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
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
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
}
