package fs.gguf;

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
            case STRING -> quote((String) value);
            case ARRAY -> "of " + ((GgufArray) value).length() + " " + ((GgufArray) value).elementType() + " values";
            case UINT64 -> Long.toUnsignedString((Long) value);
            default -> String.valueOf(value);
        };
        return type.describe() + " " + text;
    }

    /**
     * {@code text} in single quotes for a one-line message: a key, name or value read from a file may hold line
     * breaks or other control characters, which are escaped, and may be huge, so it is cut at 60 characters.
     */
    public static String quote(String text) {
        StringBuilder quoted = new StringBuilder("'");
        for (int i = 0; i < text.length(); i++) {
            if (quoted.length() > 60) return quoted.append("…'").toString();
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7F || Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                quoted.append(String.format("\\u%04x", (int) c));
            } else {
                quoted.append(c);
            }
        }
        return quoted.append("'").toString();
    }
}
