package fs.backend.cpu;

import fs.backend.Weight;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;

/** A checkpoint tensor as a {@link VectorBackend} reads it: the tensor's own bytes, row-major [rows, columns]. */
record CpuWeight(String name, DType dtype, long rows, long columns, MemorySegment data) implements Weight {}
