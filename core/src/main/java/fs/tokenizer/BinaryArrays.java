package fs.tokenizer;

import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Primitive arrays as a length and their elements, big-endian, copied in bulk both ways. A length that runs past the
 * end of the input is refused before anything is allocated, so that a corrupt file cannot ask for gigabytes.
 */
final class BinaryArrays {
    private BinaryArrays() {}

    static void writeLongs(DataOutputStream out, long[] values, int length) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate(length * Long.BYTES);
        bytes.asLongBuffer().put(values, 0, length);
        write(out, length, bytes);
    }

    static void writeInts(DataOutputStream out, int[] values, int length) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate(length * Integer.BYTES);
        bytes.asIntBuffer().put(values, 0, length);
        write(out, length, bytes);
    }

    static void writeChars(DataOutputStream out, char[] values, int length) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate(length * Character.BYTES);
        bytes.asCharBuffer().put(values, 0, length);
        write(out, length, bytes);
    }

    private static void write(DataOutputStream out, int length, ByteBuffer bytes) throws IOException {
        out.writeInt(length);
        out.write(bytes.array());
    }

    static long[] readLongs(ByteBuffer in) {
        long[] values = new long[length(in, Long.BYTES)];
        in.asLongBuffer().get(values);
        in.position(in.position() + values.length * Long.BYTES);
        return values;
    }

    static int[] readInts(ByteBuffer in) {
        int[] values = new int[length(in, Integer.BYTES)];
        in.asIntBuffer().get(values);
        in.position(in.position() + values.length * Integer.BYTES);
        return values;
    }

    static char[] readChars(ByteBuffer in) {
        char[] values = new char[length(in, Character.BYTES)];
        in.asCharBuffer().get(values);
        in.position(in.position() + values.length * Character.BYTES);
        return values;
    }

    private static int length(ByteBuffer in, int elementBytes) {
        int length = in.getInt();
        if (length < 0 || (long) length * elementBytes > in.remaining()) {
            throw new IllegalArgumentException("array length " + length + " runs past the end");
        }
        return length;
    }
}
