package fs.cli;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.Quoted;
import fs.gguf.GgufArray;
import fs.gguf.GgufValue;
import fs.gguf.GgufValueType;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A GGUF file's metadata as inspect shows it: every key with its type and value, arrays summarized (their length, and
 * in text their first few elements) rather than dumped, since a tokenizer's arrays hold 150,000 entries;
 * general.file_type also by llama.cpp's name for it.
 */
final class GgufMetadataSummary {
    private static final int SHOWN_ELEMENTS = 3;

    private GgufMetadataSummary() {}

    /** One line per key: key, type, value, the key column as wide as the longest key. */
    static List<String> lines(Map<String, GgufValue> metadata) {
        int width = metadata.keySet().stream().mapToInt(key -> Quoted.quote(key).length()).max().orElse(0);
        List<String> lines = new ArrayList<>();
        for (var entry : metadata.entrySet()) {
            GgufValue value = entry.getValue();
            String named = fileTypeName(entry.getKey(), value).map(name -> " (" + name + ")").orElse("");
            lines.add(String.format(Locale.ROOT, "%-" + width + "s  %-7s  %s%s", Quoted.quote(entry.getKey()),
                    typeName(value.type()), text(value), named));
        }
        return lines;
    }

    /** Scalars and strings as JSON values; an array as its element type and length. */
    static ObjectNode json(Map<String, GgufValue> metadata) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        for (var entry : metadata.entrySet()) {
            GgufValue value = entry.getValue();
            ObjectNode node = root.putObject(entry.getKey());
            node.put("type", typeName(value.type()));
            switch (value.type()) {
                case ARRAY -> {
                    GgufArray array = (GgufArray) value.value();
                    node.put("element_type", typeName(array.elementType()));
                    node.put("length", array.length());
                }
                case STRING -> node.put("value", (String) value.value());
                case BOOL -> node.put("value", (Boolean) value.value());
                case FLOAT32 -> node.put("value", ((Double) value.value()).floatValue());
                case FLOAT64 -> node.put("value", (Double) value.value());
                case UINT64 -> node.put("value", new BigInteger(Long.toUnsignedString((Long) value.value())));
                default -> node.put("value", (Long) value.value());
            }
            fileTypeName(entry.getKey(), value).ifPresent(name -> node.put("name", name));
        }
        return root;
    }

    /** llama.cpp's name of the file type, when {@code key} is general.file_type with a number. */
    private static Optional<String> fileTypeName(String key, GgufValue value) {
        return key.equals(ModelDescription.FILE_TYPE) && value.value() instanceof Long number
                ? Optional.of(ModelDescription.fileTypeName(number)) : Optional.empty();
    }

    private static String text(GgufValue value) {
        return switch (value.type()) {
            case ARRAY -> summary((GgufArray) value.value());
            case STRING -> {
                String text = (String) value.value();
                String quoted = Quoted.quote(text);
                yield quoted.endsWith("…'") ? quoted + " (" + text.length() + " characters)" : quoted;
            }
            default -> element(value.type(), value.value());
        };
    }

    /** "8064 × string: '!', '"', '#', …". */
    private static String summary(GgufArray array) {
        int length = array.length();
        StringBuilder text = new StringBuilder().append(length).append(" × ").append(typeName(array.elementType()));
        for (int i = 0; i < Math.min(length, SHOWN_ELEMENTS); i++) {
            text.append(i == 0 ? ": " : ", ").append(element(array.elementType(), array.element(i)));
        }
        if (length > SHOWN_ELEMENTS) text.append(", …");
        return text.toString();
    }

    private static String element(GgufValueType type, Object element) {
        return switch (type) {
            case STRING -> Quoted.quote((String) element);
            case ARRAY -> "[" + ((GgufArray) element).length() + " × "
                    + typeName(((GgufArray) element).elementType()) + "]";
            case UINT64 -> Long.toUnsignedString((Long) element);
            case FLOAT32 -> Float.toString(((Double) element).floatValue()); // widened exactly from the file's float
            default -> String.valueOf(element);
        };
    }

    /** GGUF's own spelling of the type: uint32, float32, string, array… */
    private static String typeName(GgufValueType type) {
        return type.name().toLowerCase(Locale.ROOT);
    }
}
