package fs.format;

import fs.FsException;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.stream.Collectors;

/** The {@link RowQuantizer} of each ggml type fs writes: every type fs reads from GGUF. */
public final class RowQuantizers {
    private RowQuantizers() {}

    /** The quantizer that writes {@code type}; an FsException naming the type when fs cannot write it. */
    public static RowQuantizer of(DType type) {
        RowQuantizer quantizer = lookup(type);
        if (quantizer == null) {
            throw new FsException("no quantizer for " + type + ": fs writes " + Arrays.stream(DType.values())
                    .filter(t -> lookup(t) != null).map(DType::name).collect(Collectors.joining(", ")));
        }
        return quantizer;
    }

    /** The switch names every {@link DType}, so a new one does not compile until it is given its quantizer or none. */
    private static RowQuantizer lookup(DType type) {
        return switch (type) {
            case F32 -> FloatQuantizer.F32;
            case F16 -> FloatQuantizer.F16;
            case BF16 -> FloatQuantizer.BF16;
            case Q8_0 -> Q8_0Quantizer.INSTANCE;
            case Q4_0 -> Q4_0Quantizer.INSTANCE;
            case Q2_K -> Q2KQuantizer.INSTANCE;
            case Q3_K -> Q3KQuantizer.INSTANCE;
            case Q4_K -> Q4KQuantizer.INSTANCE;
            case Q5_K -> Q5KQuantizer.INSTANCE;
            case Q6_K -> Q6KQuantizer.INSTANCE;
            case IQ2_XXS -> Iq2XxsQuantizer.INSTANCE;
            case F64, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2 -> null;
        };
    }

    /**
     * Checks a call against {@link RowQuantizer#quantize}'s contract: whole blocks per row, enough weights, an
     * importance per column, room in {@code out} (IllegalArgumentException: the caller's mistake); and finite weights
     * and finite, non-negative importances (FsException: the file's). llama.cpp's searches assume the latter and turn
     * a NaN into a garbage block or an abort; one scan of the input costs far less than the searches.
     */
    static void checkArguments(DType type, float[] weights, int rows, int columns, float[] importance,
            MemorySegment out, long outOffset) {
        long bytes = (long) rows * type.rowBytes(columns);
        if (rows < 0 || (long) rows * columns > weights.length) {
            throw new IllegalArgumentException(rows + " rows of " + columns + " weights, " + weights.length + " given");
        }
        if (importance != null && importance.length != columns) {
            throw new IllegalArgumentException(importance.length + " importances for " + columns + " columns");
        }
        if (outOffset < 0 || outOffset + bytes > out.byteSize()) {
            throw new IllegalArgumentException(bytes + " bytes of " + type + " at " + outOffset + " do not fit in "
                    + out.byteSize());
        }
        for (int i = 0; i < rows * columns; i++) {
            if (!Float.isFinite(weights[i])) {
                throw new FsException("weight " + i % columns + " of row " + i / columns + " is " + weights[i]
                        + ": " + type + " holds finite weights only");
            }
        }
        if (importance != null) {
            for (int i = 0; i < columns; i++) {
                if (!(importance[i] >= 0) || importance[i] == Float.POSITIVE_INFINITY) {
                    throw new FsException("the importance of column " + i + " is " + importance[i]
                            + ": importances are finite and not negative");
                }
            }
        }
    }
}
