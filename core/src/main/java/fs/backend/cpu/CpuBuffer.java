package fs.backend.cpu;

import fs.backend.Buffer;
import java.lang.foreign.MemorySegment;

/** A float32 buffer of a {@link VectorBackend}: off-heap memory of the backend's arena. */
record CpuBuffer(VectorBackend owner, MemorySegment segment, long length) implements Buffer {}
