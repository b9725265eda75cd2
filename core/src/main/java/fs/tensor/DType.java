package fs.tensor;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The formats a tensor's elements are stored in, from either kind of file, with their block geometry as ggml's type
 * traits give it: a row of {@code n} elements, {@code n} a multiple of {@link #blockElements()}, is stored as
 * {@code n / blockElements} blocks of {@link #blockBytes()} each, so a tensor holds rows × {@link #rowBytes(long)}
 * bytes. Plain element types are blocks of one element; the others are {@link #isQuantized() quantized}.
 *
 * <p>Each constant is the one descriptor of its format, as a row of ggml's type_traits is: every block size in fs
 * is read from here, and each piece of code that handles a format is found from its constant. A quantized format has
 * a reference decoding and a quantizer (fs.format's ReferenceDequantizer and RowQuantizers, exhaustive switches over
 * this enum), a CPU row reader (fs.backend.cpu's RowFormats, likewise), and, named by {@link #kernelName()}, a
 * matmul in libfscpu and a header of the OpenCL block kernels. docs/ARCHITECTURE.md, "Adding a format", lists them.
 *
 * <p>Each file format declares only its own types: {@link #fromSafetensorsName} knows the dtypes safetensors
 * headers name (the enum names), {@link #fromGgmlId} the ggml types fs reads from GGUF files, by the number GGUF
 * stores. The two sets overlap in the float types.
 */
public enum DType {
    F64(Kind.SAFETENSORS, -1, 1, 8),
    F32(Kind.BOTH, 0, 1, 4),
    F16(Kind.BOTH, 1, 1, 2),
    BF16(Kind.BOTH, 30, 1, 2),
    I64(Kind.SAFETENSORS, -1, 1, 8),
    I32(Kind.SAFETENSORS, -1, 1, 4),
    I16(Kind.SAFETENSORS, -1, 1, 2),
    I8(Kind.SAFETENSORS, -1, 1, 1),
    U64(Kind.SAFETENSORS, -1, 1, 8),
    U32(Kind.SAFETENSORS, -1, 1, 4),
    U16(Kind.SAFETENSORS, -1, 1, 2),
    U8(Kind.SAFETENSORS, -1, 1, 1),
    BOOL(Kind.SAFETENSORS, -1, 1, 1),
    F8_E4M3(Kind.SAFETENSORS, -1, 1, 1),
    F8_E5M2(Kind.SAFETENSORS, -1, 1, 1),
    Q4_0(Kind.GGML, 2, 32, 18),
    Q8_0(Kind.GGML, 8, 32, 34),
    Q2_K(Kind.GGML, 10, 256, 84),
    Q3_K(Kind.GGML, 11, 256, 110), // not asked for by itself, but llama.cpp's Q2_K preset stores several matrices in it
    Q4_K(Kind.GGML, 12, 256, 144),
    Q5_K(Kind.GGML, 13, 256, 176),
    Q6_K(Kind.GGML, 14, 256, 210),
    IQ2_XXS(Kind.GGML, 16, 256, 66);

    /** Which files may declare a type. */
    private enum Kind {
        SAFETENSORS, GGML, BOTH
    }

    /**
     * ggml's other types, by id, so that a file using one is refused by the type's name rather than a number. The
     * gaps (4, 5, 31-33, 36-38) are ids ggml retired; files never carry them.
     */
    private static final Map<Integer, String> OTHER_GGML_TYPES = Map.ofEntries(
            Map.entry(3, "Q4_1"), Map.entry(6, "Q5_0"), Map.entry(7, "Q5_1"), Map.entry(9, "Q8_1"),
            Map.entry(15, "Q8_K"), Map.entry(17, "IQ2_XS"), Map.entry(18, "IQ3_XXS"),
            Map.entry(19, "IQ1_S"), Map.entry(20, "IQ4_NL"), Map.entry(21, "IQ3_S"), Map.entry(22, "IQ2_S"),
            Map.entry(23, "IQ4_XS"), Map.entry(24, "I8"), Map.entry(25, "I16"), Map.entry(26, "I32"),
            Map.entry(27, "I64"), Map.entry(28, "F64"), Map.entry(29, "IQ1_M"), Map.entry(34, "TQ1_0"),
            Map.entry(35, "TQ2_0"), Map.entry(39, "MXFP4"), Map.entry(40, "NVFP4"), Map.entry(41, "Q1_0"),
            Map.entry(42, "Q2_0"));

    private final Kind kind;
    private final int ggmlId;
    private final int blockElements;
    private final int blockBytes;

    DType(Kind kind, int ggmlId, int blockElements, int blockBytes) {
        this.kind = kind;
        this.ggmlId = ggmlId;
        this.blockElements = blockElements;
        this.blockBytes = blockBytes;
    }

    /** ggml's number for the type, the one GGUF files store; only for {@link #isGgmlType() ggml types}. */
    public int ggmlId() {
        if (!isGgmlType()) throw new IllegalStateException(this + " is not a ggml type fs reads");
        return ggmlId;
    }

    public boolean isGgmlType() {
        return kind != Kind.SAFETENSORS;
    }

    public boolean isSafetensorsType() {
        return kind != Kind.GGML;
    }

    public int blockElements() {
        return blockElements;
    }

    public int blockBytes() {
        return blockBytes;
    }

    /** Whether an element is a block's share of its scales and quants rather than a number of its own. */
    public boolean isQuantized() {
        return blockElements > 1;
    }

    /**
     * The format's name in native code: libfscpu's matmul for it is {@code fs_matmul_<kernelName>_<isa>} and the
     * OpenCL block kernels decode it with the header {@code <kernelName>.h}; "q4_k" for Q4_K.
     */
    public String kernelName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Bytes of a row of {@code columns} elements; {@code columns} must be a multiple of the block size. */
    public long rowBytes(long columns) {
        if (columns < 0 || columns % blockElements != 0) {
            throw new IllegalArgumentException(this + " rows hold whole blocks of " + blockElements
                    + " elements, not " + columns);
        }
        return Math.multiplyExact(columns / blockElements, (long) blockBytes);
    }

    /** The dtype a safetensors header names {@code name}, if there is one. */
    public static Optional<DType> fromSafetensorsName(String name) {
        return Arrays.stream(values()).filter(t -> t.isSafetensorsType() && t.name().equals(name)).findFirst();
    }

    public static List<DType> safetensorsTypes() {
        return Arrays.stream(values()).filter(DType::isSafetensorsType).toList();
    }

    /** The type ggml numbers {@code id}, if fs reads it. */
    public static Optional<DType> fromGgmlId(long id) {
        return Arrays.stream(values()).filter(t -> t.isGgmlType() && t.ggmlId == id).findFirst();
    }

    public static List<DType> ggmlTypes() {
        return Arrays.stream(values()).filter(DType::isGgmlType).toList();
    }

    /** ggml's name for type {@code id} (fs reads it or not), or "unknown type N" for a number ggml never used. */
    public static String ggmlNameOf(long id) {
        Optional<DType> known = fromGgmlId(id);
        if (known.isPresent()) return known.get().name();
        String name = id >= 0 && id <= Integer.MAX_VALUE ? OTHER_GGML_TYPES.get((int) id) : null;
        return name != null ? name : "unknown type " + Long.toUnsignedString(id);
    }
}
