package fs.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A named, row-major tensor whose bytes live in {@code data} (for checkpoints, a slice of the mapped file: never a
 * copy). A row is the last dimension; {@code data.byteSize()} equals {@link #byteSize()}, rows × the dtype's bytes
 * per row.
 */
public record Tensor(String name, DType dtype, long[] shape, MemorySegment data) {
    public Tensor {
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public long dim(int i) {
        return shape[i];
    }

    public long elementCount() {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    /** Elements per row: the last dimension (a scalar is one row of one). */
    public long columns() {
        return shape.length == 0 ? 1 : shape[shape.length - 1];
    }

    /** The product of every dimension but the last: a vector is one row. */
    public long rows() {
        long rows = 1;
        for (int i = 0; i < shape.length - 1; i++) rows = Math.multiplyExact(rows, shape[i]);
        return rows;
    }

    /**
     * The bytes the shape needs in this dtype; throws IllegalArgumentException when a row is not whole blocks and
     * ArithmeticException when the size does not fit a long.
     */
    public long byteSize() {
        return Math.multiplyExact(rows(), dtype.rowBytes(columns()));
    }

    @Override
    public String toString() {
        return name + " " + dtype + Arrays.toString(shape);
    }
}
