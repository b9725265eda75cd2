package fs.gguf;

import java.util.Arrays;

/**
 * A metadata array: its element type and its elements, held in one primitive array so that a 150,000-entry token
 * list costs one slot per entry, not one object. {@code elements} is a long[] for every integer type (UINT64 as its
 * bits), a double[] for both float types, a boolean[], a {@link GgufStrings} (given a String[], the constructor
 * encodes it into one), or a GgufArray[] for arrays of arrays.
 */
public record GgufArray(GgufValueType elementType, Object elements) {
    public GgufArray {
        if (elementType == GgufValueType.STRING && elements instanceof String[] strings) {
            elements = GgufStrings.of(strings);
        }
        Class<?> expected = switch (elementType) {
            case BOOL -> boolean[].class;
            case STRING -> GgufStrings.class;
            case ARRAY -> GgufArray[].class;
            case FLOAT32, FLOAT64 -> double[].class;
            default -> long[].class;
        };
        if (!expected.isInstance(elements)) {
            throw new IllegalArgumentException(elementType + " elements must be a " + expected.getSimpleName()
                    + (elementType == GgufValueType.STRING ? " or a String[]" : ""));
        }
    }

    public int length() {
        return elements instanceof GgufStrings strings ? strings.size() : java.lang.reflect.Array.getLength(elements);
    }

    /** Element {@code index}, boxed as {@link GgufValue} boxes a value of the element type. */
    public Object element(int index) {
        return elements instanceof GgufStrings strings ? strings.get(index)
                : java.lang.reflect.Array.get(elements, index);
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

    /** Every string, decoded; {@link #string} decodes one. */
    public String[] strings() {
        return ((GgufStrings) elements).toArray();
    }

    public String string(int index) {
        return ((GgufStrings) elements).get(index);
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
