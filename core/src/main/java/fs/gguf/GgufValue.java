package fs.gguf;

import fs.Quoted;

/**
 * One metadata value and its GGUF type. {@code value} is a Long for every integer type (a UINT64 above
 * Long.MAX_VALUE keeps its bits: read it with Long's unsigned methods), a Double for both float types (a FLOAT32
 * widens exactly), a Boolean, a String, or a {@link GgufArray}.
 */
public record GgufValue(GgufValueType type, Object value) {
    public GgufValue {
        Class<?> expected = switch (type) {
            case BOOL -> Boolean.class;
            case STRING -> String.class;
            case ARRAY -> GgufArray.class;
            case FLOAT32, FLOAT64 -> Double.class;
            default -> Long.class;
        };
        if (!expected.isInstance(value)) {
            throw new IllegalArgumentException(type + " value must be a " + expected.getSimpleName() + ": " + value);
        }
    }

    /** A short rendering for messages: "a string 'qwen3'", "an unsigned 32-bit integer 7". */
    String describe() {
        String text = switch (type) {
            case STRING -> Quoted.quote((String) value);
            case ARRAY -> "of " + ((GgufArray) value).length() + " " + ((GgufArray) value).elementType() + " values";
            case UINT64 -> Long.toUnsignedString((Long) value);
            default -> String.valueOf(value);
        };
        return type.describe() + " " + text;
    }
}
