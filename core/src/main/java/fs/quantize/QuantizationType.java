package fs.quantize;

import fs.FsException;
import fs.tensor.DType;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The file types {@code fs quantize --type} makes, named as llama-quantize names them, with llama.cpp's number for
 * each (llama_ftype, stored as general.file_type) and the tensor type most matrices get; {@link QuantizationPlan}
 * applies the preset's per-tensor mix.
 */
public enum QuantizationType {
    Q8_0(7, DType.Q8_0),
    Q6_K(18, DType.Q6_K),
    Q5_K_M(17, DType.Q5_K),
    Q4_K_M(15, DType.Q4_K),
    Q4_K_S(14, DType.Q4_K),
    Q4_0(2, DType.Q4_0),
    Q2_K(10, DType.Q2_K),
    IQ2_XXS(19, DType.IQ2_XXS),
    F16(1, DType.F16),
    BF16(32, DType.BF16);

    private final int fileType;
    private final DType defaultType;

    QuantizationType(int fileType, DType defaultType) {
        this.fileType = fileType;
        this.defaultType = defaultType;
    }

    /** llama.cpp's llama_ftype number, general.file_type's value. */
    public int fileType() {
        return fileType;
    }

    /** The type of the matrices the preset does not single out. */
    public DType defaultType() {
        return defaultType;
    }

    /** Whether the preset is a block format (and so has llama.cpp's per-tensor mix), not plain F16 or BF16. */
    public boolean isQuantized() {
        return defaultType != DType.F16 && defaultType != DType.BF16;
    }

    /** The type named {@code name} (any case: q4_k_m is Q4_K_M); an unknown name is one FsException listing them. */
    public static QuantizationType parse(String name) {
        for (QuantizationType type : values()) {
            if (type.name().equalsIgnoreCase(name)) return type;
        }
        throw new FsException("'" + name + "' is not a type fs quantize makes (it makes "
                + Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", ")) + ")");
    }
}
