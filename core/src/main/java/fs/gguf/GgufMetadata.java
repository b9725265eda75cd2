package fs.gguf;

import fs.FsException;
import fs.Quoted;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The key-value metadata of one GGUF file, in file order, with typed reads whose errors are one line naming the file
 * and the key. Integer reads accept any of GGUF's integer widths (writers differ: counts appear as UINT32 or UINT64)
 * and check the value's range instead.
 */
public final class GgufMetadata {
    private final String file;
    private final Map<String, GgufValue> values;

    GgufMetadata(String file, Map<String, GgufValue> values) {
        this.file = file;
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** Every key and value, in the order the file lists them. */
    public Map<String, GgufValue> values() {
        return values;
    }

    public boolean has(String key) {
        return values.containsKey(key);
    }

    public Optional<GgufValue> get(String key) {
        return Optional.ofNullable(values.get(key));
    }

    public String string(String key) {
        return (String) require(key, GgufValueType.STRING).value();
    }

    /** An integer of any width that is between 0 and Integer.MAX_VALUE. */
    public int nonNegativeInt(String key) {
        GgufValue value = required(key);
        if (!value.type().isInteger()) throw error(key, "must be an integer, found " + value.describe());
        long bits = (Long) value.value();
        if (bits < 0 || bits > Integer.MAX_VALUE) { // a UINT64 past Long.MAX_VALUE has its top bit set
            throw error(key, "must be an integer from 0 to " + Integer.MAX_VALUE + ", found " + value.describe());
        }
        return (int) bits;
    }

    /** A float of either width, or an integer (widened). */
    public double number(String key) {
        GgufValue value = required(key);
        if (value.type().isFloat()) return (Double) value.value();
        if (value.type().isInteger()) {
            long bits = (Long) value.value();
            return value.type() == GgufValueType.UINT64 && bits < 0 ? bits + 0x1p64 : bits;
        }
        throw error(key, "must be a number, found " + value.describe());
    }

    public boolean bool(String key) {
        return (Boolean) require(key, GgufValueType.BOOL).value();
    }

    /** An array whose elements are of {@code elementType}. */
    public GgufArray array(String key, GgufValueType elementType) {
        GgufArray array = (GgufArray) require(key, GgufValueType.ARRAY).value();
        if (array.elementType() != elementType) {
            throw error(key, "must be an array of " + elementType.describe().replaceFirst("^an? ", "")
                    + " values, found an array of " + array.elementType().describe().replaceFirst("^an? ", "") + " values");
        }
        return array;
    }

    private GgufValue required(String key) {
        GgufValue value = values.get(key);
        if (value == null) throw new FsException(file + ": key " + Quoted.quote(key) + " is missing");
        return value;
    }

    private GgufValue require(String key, GgufValueType type) {
        GgufValue value = required(key);
        if (value.type() != type) throw error(key, "must be " + type.describe() + ", found " + value.describe());
        return value;
    }

    /** A problem with {@code key}'s value, as one line naming the file and the key. */
    public FsException error(String key, String problem) {
        return new FsException(file + ": key " + Quoted.quote(key) + " " + problem);
    }
}
