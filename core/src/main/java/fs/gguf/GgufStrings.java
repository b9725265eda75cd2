package fs.gguf;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The elements of a metadata array of strings, kept as their UTF-8 bytes end to end and each decoded when it is read.
 * A qwen3 file's token and merge lists are 300,000 strings; opening it used to make a String of each, though a run
 * whose tokenizer comes from the tokenizer cache reads a handful (the end tokens). The bytes are checked to be valid
 * UTF-8 before they get here (GgufHeader when reading a file, String's own encoding otherwise), so decoding never
 * fails and never replaces anything.
 */
public final class GgufStrings {
    private final byte[] bytes;
    /** String i is {@code bytes[starts[i], starts[i + 1])}; the last entry is bytes.length. */
    private final int[] starts;

    GgufStrings(byte[] bytes, int[] starts) {
        this.bytes = bytes;
        this.starts = starts;
    }

    static GgufStrings of(String[] strings) {
        byte[][] encoded = new byte[strings.length][];
        int[] starts = new int[strings.length + 1];
        for (int i = 0; i < strings.length; i++) {
            encoded[i] = strings[i].getBytes(StandardCharsets.UTF_8);
            starts[i + 1] = Math.addExact(starts[i], encoded[i].length);
        }
        byte[] bytes = new byte[starts[strings.length]];
        for (int i = 0; i < strings.length; i++) System.arraycopy(encoded[i], 0, bytes, starts[i], encoded[i].length);
        return new GgufStrings(bytes, starts);
    }

    public int size() {
        return starts.length - 1;
    }

    public String get(int index) {
        return new String(bytes, starts[index], starts[index + 1] - starts[index], StandardCharsets.UTF_8);
    }

    /** Every string, decoded. */
    public String[] toArray() {
        String[] strings = new String[size()];
        for (int i = 0; i < strings.length; i++) strings[i] = get(i);
        return strings;
    }

    /** Equal bytes are equal strings: valid UTF-8 spells each string one way. */
    @Override
    public boolean equals(Object other) {
        return other instanceof GgufStrings that && Arrays.equals(starts, that.starts) && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(starts) + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return Arrays.toString(toArray());
    }
}
