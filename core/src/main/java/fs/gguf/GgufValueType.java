package fs.gguf;

import java.util.Optional;

/**
 * The types of GGUF metadata values, with the number a file stores for each. {@code minBytes} is the fewest bytes one
 * value occupies (a string is at least its 8-byte length; an array its 4-byte element type and 8-byte count): it
 * bounds a claimed count by the bytes left in the file before anything is allocated for it.
 */
public enum GgufValueType {
    UINT8(0, 1), INT8(1, 1), UINT16(2, 2), INT16(3, 2), UINT32(4, 4), INT32(5, 4), FLOAT32(6, 4), BOOL(7, 1),
    STRING(8, 8), ARRAY(9, 12), UINT64(10, 8), INT64(11, 8), FLOAT64(12, 8);

    private final int id;
    private final int minBytes;

    GgufValueType(int id, int minBytes) {
        this.id = id;
        this.minBytes = minBytes;
    }

    public int id() {
        return id;
    }

    int minBytes() {
        return minBytes;
    }

    public boolean isInteger() {
        return switch (this) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> true;
            default -> false;
        };
    }

    public boolean isFloat() {
        return this == FLOAT32 || this == FLOAT64;
    }

    static Optional<GgufValueType> byId(long id) {
        for (GgufValueType type : values()) {
            if (type.id == id) return Optional.of(type);
        }
        return Optional.empty();
    }

    /** Plain words for messages: "an unsigned 32-bit integer", "a string", "an array". */
    String describe() {
        return switch (this) {
            case UINT8, UINT16, UINT32, UINT64 -> "an unsigned " + minBytes * 8 + "-bit integer";
            case INT8, INT16, INT32, INT64 -> "a signed " + minBytes * 8 + "-bit integer";
            case FLOAT32 -> "a 32-bit float";
            case FLOAT64 -> "a 64-bit float";
            case BOOL -> "a boolean";
            case STRING -> "a string";
            case ARRAY -> "an array";
        };
    }
}
