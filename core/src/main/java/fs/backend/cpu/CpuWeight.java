package fs.backend.cpu;

import fs.backend.Weight;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;

/**
 * A checkpoint tensor as a {@link VectorBackend} reads it: the tensor's own bytes, row-major [rows, columns], each
 * row {@link #rowBytes} long, read by the format chosen at upload.
 */
record CpuWeight(String name, DType dtype, long rows, long columns, MemorySegment data, RowFormat format)
        implements Weight {
    long rowBytes() {
        return dtype.rowBytes(columns);
    }
}
