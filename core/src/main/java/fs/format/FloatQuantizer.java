package fs.format;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The float types, as ggml_quantize_chunk writes them: F32 copied, F16 rounded to nearest even
 * (GGML_FP32_TO_FP16, {@link Float#floatToFloat16}), BF16 by ggml_compute_fp32_to_bf16 (the top half of the float,
 * rounded to nearest even). No importance: there is nothing to choose.
 */
final class FloatQuantizer implements RowQuantizer {
    static final FloatQuantizer F32 = new FloatQuantizer(DType.F32);
    static final FloatQuantizer F16 = new FloatQuantizer(DType.F16);
    static final FloatQuantizer BF16 = new FloatQuantizer(DType.BF16);

    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final DType type;

    private FloatQuantizer(DType type) {
        this.type = type;
    }

    @Override
    public void quantize(float[] weights, int rows, int columns, float[] importance, MemorySegment out, long outOffset) {
        RowQuantizers.checkArguments(type, weights, rows, columns, importance, out, outOffset);
        int n = rows * columns;
        switch (type) {
            case F32 -> MemorySegment.copy(weights, 0, out, FLOAT, outOffset, n);
            case F16 -> {
                for (int i = 0; i < n; i++) out.set(HALF, outOffset + 2L * i, Float.floatToFloat16(weights[i]));
            }
            default -> {
                for (int i = 0; i < n; i++) out.set(HALF, outOffset + 2L * i, bf16(weights[i]));
            }
        }
    }

    /** ggml_compute_fp32_to_bf16 for a finite float (checkArguments refuses the others): round to nearest even. */
    static short bf16(float v) {
        int bits = Float.floatToRawIntBits(v);
        return (short) ((bits + (0x7FFF + (bits >>> 16 & 1))) >>> 16);
    }
}
