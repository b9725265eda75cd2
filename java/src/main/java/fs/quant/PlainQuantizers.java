package fs.quant;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Optional;

/**
 * The plain float formats as {@link RowQuantizer}s: F32 as it is, F16 and BF16 rounded to nearest, ties to even, as
 * ggml converts them (ggml_fp32_to_fp16, ggml_compute_fp32_to_bf16; a BF16 NaN is kept quiet as ggml keeps it). The
 * importance matrix does not apply: rounding each weight to nearest is already the least error.
 */
public final class PlainQuantizers {
    private static final ValueLayout.OfFloat F32_LAYOUT =
            ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public static final RowQuantizer F32 = (weights, rows, columns, importance, out, outOffset) -> {
        long n = (long) rows * columns;
        for (int i = 0; i < n; i++) out.set(F32_LAYOUT, outOffset + 4L * i, weights[i]);
    };

    public static final RowQuantizer F16 = (weights, rows, columns, importance, out, outOffset) -> {
        long n = (long) rows * columns;
        for (int i = 0; i < n; i++) out.set(HALF, outOffset + 2L * i, Float.floatToFloat16(weights[i]));
    };

    public static final RowQuantizer BF16 = (weights, rows, columns, importance, out, outOffset) -> {
        long n = (long) rows * columns;
        for (int i = 0; i < n; i++) out.set(HALF, outOffset + 2L * i, bf16(weights[i]));
    };

    private PlainQuantizers() {}

    /** The quantizer of a plain float format; empty for every block format. */
    public static Optional<RowQuantizer> of(DType type) {
        return switch (type) {
            case F32 -> Optional.of(F32);
            case F16 -> Optional.of(F16);
            case BF16 -> Optional.of(BF16);
            default -> Optional.empty();
        };
    }

    /** The bfloat16 nearest {@code value} (ties to even), its top 16 bits when exact. */
    static short bf16(float value) {
        int bits = Float.floatToRawIntBits(value);
        if ((bits & 0x7fffffff) > 0x7f800000) return (short) ((bits >>> 16) | 64); // NaN: keep it, quiet
        return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
    }
}
