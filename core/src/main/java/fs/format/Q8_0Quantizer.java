package fs.format;

import static fs.format.QuantMath.half;
import static fs.format.QuantMath.putHalf;
import static fs.format.QuantMath.roundf;
import static fs.format.QuantMath.truncate;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Q8_0, as ggml-quants.c's quantize_row_q8_0_ref: per block of 32, d = amax / 127 and q = roundf(x / d). llama.cpp
 * has no importance-weighted Q8_0 (quantize_q8_0 ignores its quant_weights), so neither has this: the importance is
 * ignored and the bytes are llama.cpp's either way.
 */
final class Q8_0Quantizer implements RowQuantizer {
    static final Q8_0Quantizer INSTANCE = new Q8_0Quantizer();

    private static final int BLOCK = DType.Q8_0.blockElements();
    private static final int BLOCK_BYTES = DType.Q8_0.blockBytes();

    private Q8_0Quantizer() {}

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(DType.Q8_0, weights, rows, columns, importance, out, outOffset);
        byte[] row = new byte[columns / BLOCK * BLOCK_BYTES];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < columns / BLOCK; b++) block(weights, r * columns + b * BLOCK, row, b * BLOCK_BYTES);
            MemorySegment.copy(row, 0, out, ValueLayout.JAVA_BYTE, outOffset + (long) r * row.length, row.length);
        }
    }

    private static void block(float[] x, int at, byte[] out, int o) {
        float amax = 0;
        for (int j = 0; j < BLOCK; j++) amax = Math.max(amax, Math.abs(x[at + j]));
        float d = amax / 127;
        float id = d != 0 ? 1f / d : 0f;
        putHalf(out, o, half(d));
        for (int j = 0; j < BLOCK; j++) out[o + 2 + j] = (byte) truncate(roundf(x[at + j] * id));
    }
}
