package fs.backend.cpu;

import static fs.backend.cpu.MatmulKernels.SHORT;

import java.lang.foreign.MemorySegment;

/**
 * IEEE half rows. The Vector API has no half-to-float conversion, so the one-row dot is the plain sequential FMA
 * chain over the converted elements, as a batch computes it: f16 checkpoints are rare enough not to earn more.
 */
final class F16Rows implements RowFormat {
    static final F16Rows INSTANCE = new F16Rows();

    private F16Rows() {}

    @Override
    public float dot(MemorySegment w, long rowOffset, float[] x, int xOffset, int k, float[] lanes) {
        float s = 0f;
        for (int i = 0; i < k; i++) s = Math.fma(Float.float16ToFloat(w.get(SHORT, rowOffset + 2L * i)), x[xOffset + i], s);
        return s;
    }

    @Override
    public void dequantize(MemorySegment w, long rowOffset, int k, float[] out, int outOffset) {
        for (int i = 0; i < k; i++) out[outOffset + i] = Float.float16ToFloat(w.get(SHORT, rowOffset + 2L * i));
    }
}
