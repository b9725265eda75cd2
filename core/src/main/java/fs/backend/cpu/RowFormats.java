package fs.backend.cpu;

import fs.tensor.DType;
import java.util.Optional;

/**
 * The {@link RowFormat} of each weight dtype the CPU backend reads: adding a format is a line here and its class. The
 * switch names every {@link DType}, so a new one does not compile until it is given its reader or none.
 */
final class RowFormats {
    private RowFormats() {}

    /** The format that reads {@code dtype}, if the CPU backend reads it (on this machine's vector width). */
    static Optional<RowFormat> of(DType dtype) {
        RowFormat format = switch (dtype) {
            case F32 -> F32Rows.INSTANCE;
            case F16 -> F16Rows.INSTANCE;
            case BF16 -> Bf16Rows.INSTANCE;
            case Q8_0 -> Q8_0Rows.fitsVectors() ? Q8_0Rows.INSTANCE : null;
            case Q4_0 -> Q4_0Rows.fitsVectors() ? Q4_0Rows.INSTANCE : null;
            case Q2_K -> new Q2KRows();
            case Q3_K -> new Q3KRows();
            case Q4_K -> new Q4KRows();
            case Q5_K -> new Q5KRows();
            case Q6_K -> new Q6KRows();
            case IQ2_XXS -> new Iq2XxsRows();
            case F64, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2 -> null;
        };
        return Optional.ofNullable(format);
    }
}
