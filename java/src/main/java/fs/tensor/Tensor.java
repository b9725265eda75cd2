package fs.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A named, row-major tensor whose bytes live in {@code data} (for checkpoints, a slice of the mapped file: never a
 * copy). {@code data.byteSize()} equals {@code elementCount() * dtype.byteSize()}.
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

    @Override
    public String toString() {
        return name + " " + dtype + Arrays.toString(shape);
    }
}
