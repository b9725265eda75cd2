package fs.gguf;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One tensor of a GGUF file. {@code shape} is row-major, slowest dimension first, as {@link fs.tensor.Tensor}'s is
 * (GGUF lists dimensions fastest first; the reader reverses them), so a matrix is rows × columns and its last
 * dimension is the row width. {@code offset} is where the data starts relative to the file's data section;
 * {@code data} is that slice of the mapped file, never a copy: its size is rows × {@link #rowBytes()}.
 */
public record GgufTensor(String name, DType type, long[] shape, long offset, MemorySegment data) {
    public GgufTensor {
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Elements per row: the last (fastest) dimension. */
    public long columns() {
        return shape[shape.length - 1];
    }

    /** The product of every dimension but the last: a vector is one row. */
    public long rows() {
        long rows = 1;
        for (int i = 0; i < shape.length - 1; i++) rows *= shape[i];
        return rows;
    }

    public long rowBytes() {
        return type.rowBytes(columns());
    }

    /** The bytes of row {@code row}. */
    public MemorySegment row(long row) {
        return data.asSlice(row * rowBytes(), rowBytes());
    }

    @Override
    public String toString() {
        return name + " " + type + Arrays.toString(shape);
    }
}
