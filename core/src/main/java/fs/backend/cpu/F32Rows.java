package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.F;
import static fs.backend.cpu.MatmulKernels.FLOAT;
import static fs.backend.cpu.MatmulKernels.L;
import static fs.backend.cpu.MatmulKernels.LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;

/** float32 rows: one accumulator per row over vectors of L elements, then the scalar tail. */
final class F32Rows implements TiledRows {
    static final F32Rows INSTANCE = new F32Rows();

    private F32Rows() {}

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        return tile1(w, rowOffset, x, xOffset, k, lanes);
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        MemorySegment.copy(w, FLOAT, rowOffset, out, outOffset, k);
    }

    @Override
    public void decodeAsLoaded(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        dequantize(w, rowOffset, k, out, outOffset);
    }

    @Override
    public int tileVectorPart(int k) {
        return MatmulKernels.vectorPart(k, L);
    }

    private static float finish(float s, MemorySegment w, long wRow, float[] x, int xRow, int from, int k) {
        for (int i = from; i < k; i++) s = Math.fma(w.get(FLOAT, wRow + 4L * i), x[xRow + i], s);
        return s;
    }

    @Override
    public float tile1(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, L);
        FloatVector acc = FloatVector.zero(F);
        for (int c = 0; c < full; c += L) {
            acc = FloatVector.fromMemorySegment(F, w, rowOffset + 4L * c, LE).fma(FloatVector.fromArray(F, x, xOffset + c), acc);
        }
        acc.intoArray(lanes, 0);
        return finish(MatmulKernels.sumLanes(lanes, 0), w, rowOffset, x, xOffset, full, k);
    }

    @Override
    public void tile4(MemorySegment w, long w0, long wStride, float[] x, int xOffset, int k, MemorySegment out, long o0,
                      long oStride, float[] lanes) {
        int full = MatmulKernels.vectorPart(k, L);
        long w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int c = 0; c < full; c += L) {
            long o = 4L * c;
            FloatVector xv = FloatVector.fromArray(F, x, xOffset + c);
            a0 = FloatVector.fromMemorySegment(F, w, w0 + o, LE).fma(xv, a0);
            a1 = FloatVector.fromMemorySegment(F, w, w1 + o, LE).fma(xv, a1);
            a2 = FloatVector.fromMemorySegment(F, w, w2 + o, LE).fma(xv, a2);
            a3 = FloatVector.fromMemorySegment(F, w, w3 + o, LE).fma(xv, a3);
        }
        a0.intoArray(lanes, 0);
        a1.intoArray(lanes, L);
        a2.intoArray(lanes, 2 * L);
        a3.intoArray(lanes, 3 * L);
        for (int i = 0; i < 4; i++) {
            float s = MatmulKernels.sumLanes(lanes, i * L);
            out.set(FLOAT, o0 + i * oStride, finish(s, w, w0 + i * wStride, x, xOffset, full, k));
        }
    }
}
