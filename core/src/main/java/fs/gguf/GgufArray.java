package fs.gguf;

import java.util.Arrays;

/**
 * A metadata array: its element type and its elements, held in one primitive array so that a 150,000-entry token
 * list costs one slot per entry, not one object. {@code elements} is a long[] for every integer type (UINT64 as its
 * bits), a double[] for both float types, a boolean[], a String[], or a GgufArray[] for arrays of arrays.
 */
public record GgufArray(GgufValueType elementType, Object elements) {
    public GgufArray {
        Class<?> expected = switch (elementType) {
            case BOOL -> boolean[].class;
            case STRING -> String[].class;
            case ARRAY -> GgufArray[].class;
            case FLOAT32, FLOAT64 -> double[].class;
            default -> long[].class;
        };
        if (!expected.isInstance(elements)) {
            throw new IllegalArgumentException(elementType + " elements must be a " + expected.getSimpleName());
        }
    }

    public int length() {
        return java.lang.reflect.Array.getLength(elements);
    }

    public long[] longs() {
        return ((long[]) elements).clone();
    }

    public double[] doubles() {
        return ((double[]) elements).clone();
    }

    public boolean[] booleans() {
        return ((boolean[]) elements).clone();
    }

    public String[] strings() {
        return ((String[]) elements).clone();
    }

    public GgufArray[] arrays() {
        return ((GgufArray[]) elements).clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof GgufArray that && elementType == that.elementType
                && Arrays.deepEquals(new Object[] {elements}, new Object[] {that.elements});
    }

    @Override
    public int hashCode() {
        return 31 * elementType.hashCode() + Arrays.deepHashCode(new Object[] {elements});
    }

    @Override
    public String toString() {
        return "GgufArray[" + elementType + " × " + length() + "]";
    }
}
