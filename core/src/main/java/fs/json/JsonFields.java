package fs.json;

import com.fasterxml.jackson.databind.JsonNode;
import fs.Quoted;
import java.util.function.Function;

/**
 * Typed reads of the fields of one JSON object, each failure one line that names the field and shows what was found
 * ("hidden_size must be a positive integer, found string '1024'"). The caller's factory turns that line into its
 * exception: a file reader prefixes the file, a server answers a 400 that names the field apart from the line and
 * words a wrong type its own way ({@link FieldErrors}).
 */
public final class JsonFields {
    /** Characters of a value's JSON a message shows before it is cut short. */
    private static final int SHOWN_CHARS = 40;

    private final JsonNode object;
    /** What field names are prefixed with in messages: "" at the top level, "rope_scaling." inside that object. */
    private final String prefix;
    private final FieldErrors errors;

    /**
     * Makes the caller's exception for a problem with one field, given the field as messages name it
     * ("messages[2].content"; null for a problem with the object as a whole).
     */
    public interface FieldErrors {
        /** A problem's whole line. */
        RuntimeException invalid(String field, String line);

        /** A value of the wrong kind: by default the line "field must be {@code expected}, found string 'x'". */
        default RuntimeException mistyped(String field, String expected, JsonNode found) {
            return invalid(field, field + " must be " + expected + ", found " + describe(found));
        }
    }

    private JsonFields(JsonNode object, String prefix, FieldErrors errors) {
        this.object = object;
        this.prefix = prefix;
        this.errors = errors;
    }

    /** The fields of {@code object}; {@code error} makes the exception for a problem's line. */
    public static JsonFields of(JsonNode object, Function<String, ? extends RuntimeException> error) {
        return new JsonFields(object, "", (field, line) -> error.apply(line));
    }

    /** The fields of {@code object}; {@code errors} makes the exception for a problem, knowing the field. */
    public static JsonFields of(JsonNode object, FieldErrors errors) {
        return new JsonFields(object, "", errors);
    }

    /** The fields of {@code inner}, the value of this object's {@code field}: messages name them "field.key". */
    public JsonFields inner(String field, JsonNode inner) {
        return new JsonFields(inner, prefix + field + ".", errors);
    }

    /** The field as messages name it. */
    public String name(String field) {
        return prefix + field;
    }

    /** The field's value as it is, null when absent. */
    public JsonNode get(String field) {
        return object.get(field);
    }

    /** Whether the field is there with a value other than null. */
    public boolean has(String field) {
        JsonNode node = object.get(field);
        return node != null && !node.isNull();
    }

    /** The field's value, which must be there and not null. */
    public JsonNode required(String field) {
        if (!has(field)) throw error(field, name(field) + " is missing");
        return object.get(field);
    }

    /** The fields of the field's value, which must be an object: messages name them "field.key". */
    public JsonFields object(String field) {
        JsonNode node = required(field);
        if (!node.isObject()) throw mistyped(field, "an object", node);
        return inner(field, node);
    }

    /** The field's value, which must be an array. */
    public JsonNode array(String field) {
        JsonNode node = required(field);
        if (!node.isArray()) throw mistyped(field, "an array", node);
        return node;
    }

    /** The fields of element {@code index} of the array {@code field}, which must be an object. */
    public JsonFields element(String field, int index) {
        JsonNode node = array(field).get(index);
        String element = field + "[" + index + "]";
        if (!node.isObject()) throw mistyped(element, "an object", node);
        return inner(element, node);
    }

    public int positiveInt(String field) {
        JsonNode node = required(field);
        if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() <= 0) {
            throw mistyped(field, "a positive integer", node);
        }
        return node.intValue();
    }

    /** A number of any size or precision, as a double. */
    public double number(String field) {
        JsonNode node = required(field);
        if (!node.isNumber() || !Double.isFinite(node.doubleValue())) throw mistyped(field, "a number", node);
        return node.doubleValue();
    }

    /** A number above 0 that stays above 0 and finite when rounded to a float. */
    public float positiveFloat(String field) {
        JsonNode node = required(field);
        float value = (float) node.doubleValue();
        if (!node.isNumber() || !(value > 0) || Float.isInfinite(value)) {
            throw mistyped(field, "a positive number (as a float)", node);
        }
        return value;
    }

    public boolean bool(String field) {
        JsonNode node = required(field);
        if (!node.isBoolean()) throw mistyped(field, "true or false", node);
        return node.booleanValue();
    }

    /** The field's boolean, {@code absent} when it is missing or null. */
    public boolean bool(String field, boolean absent) {
        return has(field) ? bool(field) : absent;
    }

    public String text(String field) {
        JsonNode node = required(field);
        if (!node.isTextual()) throw mistyped(field, "a string", node);
        return node.textValue();
    }

    /** The field's string; null when it is missing or null. */
    public String textOrNull(String field) {
        return has(field) ? text(field) : null;
    }

    /** The field's boolean; null when it is missing or null. */
    public Boolean boolOrNull(String field) {
        return has(field) ? bool(field) : null;
    }

    /** The field's number as a double; null when it is missing or null. */
    public Double numberOrNull(String field) {
        return has(field) ? number(field) : null;
    }

    /** The field's integer, which must fit an int; null when it is missing or null. */
    public Integer intOrNull(String field) {
        return has(field) ? (int) integer(field, Integer.MIN_VALUE, Integer.MAX_VALUE) : null;
    }

    /** The field's integer, which must fit a long; null when it is missing or null. */
    public Long longOrNull(String field) {
        return has(field) ? integer(field, Long.MIN_VALUE, Long.MAX_VALUE) : null;
    }

    private long integer(String field, long min, long max) {
        JsonNode node = required(field);
        if (!node.isIntegralNumber()) throw mistyped(field, "an integer", node);
        if (!node.canConvertToLong() || node.longValue() < min || node.longValue() > max) {
            throw error(field, name(field) + " is out of range: " + shown(node));
        }
        return node.longValue();
    }

    /** An array of integers that fit a long, of exactly {@code length} elements unless that is -1. */
    public long[] longs(String field, int length) {
        JsonNode node = required(field);
        if (!node.isArray()) throw mistyped(field, "an array of integers", node);
        if (length >= 0 && node.size() != length) {
            throw error(field, name(field) + " must have " + length + " elements, found " + node.size());
        }
        long[] values = new long[node.size()];
        for (int i = 0; i < values.length; i++) {
            JsonNode element = node.get(i);
            if (!element.isIntegralNumber() || !element.canConvertToLong()) {
                throw mistyped(field, "an array of integers", element);
            }
            values[i] = element.longValue();
        }
        return values;
    }

    /** "field must be {@code expected}, found string 'x'". */
    public RuntimeException mistyped(String field, String expected, JsonNode found) {
        return errors.mistyped(name(field), expected, found);
    }

    /** The caller's exception for a problem with these fields as a whole. */
    public RuntimeException error(String problem) {
        return errors.invalid(null, problem);
    }

    /** The caller's exception for a problem with {@code field}, {@code line} the whole message. */
    public RuntimeException error(String field, String line) {
        return errors.invalid(name(field), line);
    }

    /** A value as a message shows it: its kind, then a string's text quoted or any other value's JSON, cut short. */
    public static String describe(JsonNode node) {
        return kind(node) + " " + shown(node);
    }

    /** A string's text quoted, any other value's JSON; either cut short, so a message stays one short line. */
    public static String shown(JsonNode node) {
        if (node.isTextual()) return Quoted.quote(node.textValue());
        String text = node.toString();
        return text.length() <= SHOWN_CHARS ? text : text.substring(0, SHOWN_CHARS) + "…";
    }

    /** The kind of a value: object, array, string, number, boolean or null. */
    public static String kind(JsonNode node) {
        return node.getNodeType().toString().toLowerCase();
    }
}
