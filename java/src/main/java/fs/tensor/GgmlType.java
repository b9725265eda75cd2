package fs.tensor;

import java.util.Map;
import java.util.Optional;

/**
 * The ggml element types fs reads (from GGUF files), with their block geometry as ggml's type traits give it: a row
 * of {@code n} elements, {@code n} a multiple of {@link #blockElements()}, is stored as {@code n / blockElements}
 * blocks of {@link #blockBytes()} each, so a tensor's size is rows × {@link #rowBytes(long)}. The plain float types
 * are blocks of one element. {@code id} is ggml's number for the type, the one GGUF files store.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q8_0(8, 32, 34),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110), // not asked for by itself, but llama.cpp's Q2_K preset stores several matrices in it
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    IQ2_XXS(16, 256, 66),
    BF16(30, 1, 2);

    /**
     * ggml's other types, by id, so that a file using one is refused by the type's name rather than a number. The
     * gaps (4, 5, 31-33, 36-38) are ids ggml retired; files never carry them.
     */
    private static final Map<Integer, String> UNSUPPORTED = Map.ofEntries(
            Map.entry(3, "Q4_1"), Map.entry(6, "Q5_0"), Map.entry(7, "Q5_1"), Map.entry(9, "Q8_1"),
            Map.entry(15, "Q8_K"), Map.entry(17, "IQ2_XS"), Map.entry(18, "IQ3_XXS"),
            Map.entry(19, "IQ1_S"), Map.entry(20, "IQ4_NL"), Map.entry(21, "IQ3_S"), Map.entry(22, "IQ2_S"),
            Map.entry(23, "IQ4_XS"), Map.entry(24, "I8"), Map.entry(25, "I16"), Map.entry(26, "I32"),
            Map.entry(27, "I64"), Map.entry(28, "F64"), Map.entry(29, "IQ1_M"), Map.entry(34, "TQ1_0"),
            Map.entry(35, "TQ2_0"), Map.entry(39, "MXFP4"), Map.entry(40, "NVFP4"), Map.entry(41, "Q1_0"),
            Map.entry(42, "Q2_0"));

    private final int id;
    private final int blockElements;
    private final int blockBytes;

    GgmlType(int id, int blockElements, int blockBytes) {
        this.id = id;
        this.blockElements = blockElements;
        this.blockBytes = blockBytes;
    }

    public int id() {
        return id;
    }

    public int blockElements() {
        return blockElements;
    }

    public int blockBytes() {
        return blockBytes;
    }

    /** Bytes of a row of {@code columns} elements; {@code columns} must be a multiple of the block size. */
    public long rowBytes(long columns) {
        if (columns < 0 || columns % blockElements != 0) {
            throw new IllegalArgumentException(this + " rows hold whole blocks of " + blockElements
                    + " elements, not " + columns);
        }
        return Math.multiplyExact(columns / blockElements, (long) blockBytes);
    }

    /** The type ggml numbers {@code id}, if fs reads it. */
    public static Optional<GgmlType> byId(long id) {
        for (GgmlType type : values()) {
            if (type.id == id) return Optional.of(type);
        }
        return Optional.empty();
    }

    /** ggml's name for type {@code id} (fs reads it or not), or "unknown type N" for a number ggml never used. */
    public static String nameOf(long id) {
        Optional<GgmlType> known = byId(id);
        if (known.isPresent()) return known.get().name();
        String name = id >= 0 && id <= Integer.MAX_VALUE ? UNSUPPORTED.get((int) id) : null;
        return name != null ? name : "unknown type " + Long.toUnsignedString(id);
    }
}
