package fs.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.Iterator;
import java.util.Map;

/**
 * JSON written as the chat template's {@code tojson} filter writes it in transformers: Python's
 * {@code json.dumps(x, ensure_ascii=False)}, i.e. ", " and ": " separators, keys in their order, non-ASCII kept, and
 * floats in Python's repr.
 */
final class PythonJson {
    private PythonJson() {}

    static String dumps(JsonNode node) {
        StringBuilder out = new StringBuilder();
        write(node, out);
        return out.toString();
    }

    private static void write(JsonNode node, StringBuilder out) {
        if (node == null) {
            out.append("null");
            return;
        }
        switch (node.getNodeType()) {
            case OBJECT -> {
                out.append('{');
                Iterator<Map.Entry<String, JsonNode>> fields = node.properties().iterator();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    writeString(field.getKey(), out);
                    out.append(": ");
                    write(field.getValue(), out);
                    if (fields.hasNext()) out.append(", ");
                }
                out.append('}');
            }
            case ARRAY -> {
                out.append('[');
                for (int i = 0; i < node.size(); i++) {
                    if (i > 0) out.append(", ");
                    write(node.get(i), out);
                }
                out.append(']');
            }
            case STRING -> writeString(node.textValue(), out);
            case NUMBER -> out.append(node.isIntegralNumber() ? node.bigIntegerValue().toString() : pythonFloat(node.doubleValue()));
            case BOOLEAN -> out.append(node.booleanValue() ? "true" : "false");
            default -> out.append("null");
        }
    }

    private static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        out.append('"');
    }

    /** Python's repr of a float: shortest digits, fixed notation for exponents -4..15, else d.ddde±XX. */
    static String pythonFloat(double value) {
        if (Double.isNaN(value)) return "NaN";
        if (Double.isInfinite(value)) return value > 0 ? "Infinity" : "-Infinity";
        if (value == 0) return (1 / value < 0) ? "-0.0" : "0.0";
        // Java's Double.toString gives the shortest digits that round-trip, as Python's repr does.
        BigDecimal exact = new BigDecimal(Double.toString(Math.abs(value))).stripTrailingZeros();
        String digits = exact.unscaledValue().toString();
        int pointPosition = digits.length() - exact.scale(); // value = 0.digits × 10^pointPosition
        String sign = value < 0 ? "-" : "";
        if (pointPosition > -4 && pointPosition <= 16) {
            if (pointPosition <= 0) return sign + "0." + "0".repeat(-pointPosition) + digits;
            if (pointPosition >= digits.length()) return sign + digits + "0".repeat(pointPosition - digits.length()) + ".0";
            return sign + digits.substring(0, pointPosition) + "." + digits.substring(pointPosition);
        }
        int exponent = pointPosition - 1;
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + String.format("%02d", Math.abs(exponent));
    }
}
