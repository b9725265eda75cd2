package fs.backend.cpu;

import fs.backend.Weight;
import fs.backend.cpu.NativeKernels.RepackedRows;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;

/**
 * A checkpoint tensor as a {@link VectorBackend} reads it: the tensor's own bytes, row-major [rows, columns], each
 * row {@link #rowBytes} long, read by the format chosen at upload; and, where the native kernels have a repacked
 * layout for its format, a copy of its rows in that layout ({@code repacked}, else null), which the native matmuls
 * read instead. The tensor's bytes stay for everything else: embedding rows, norms, the Vector API path, verify's
 * check.
 */
record CpuWeight(String name, DType dtype, long rows, long columns, MemorySegment data, RowFormat format,
        RepackedRows repacked) implements Weight {
    long rowBytes() {
        return dtype.rowBytes(columns);
    }
}
