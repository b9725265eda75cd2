package fs.backend.opencl;

import java.lang.foreign.MemorySegment;

/** A cl_mem handle (a device buffer) that kernels take as an argument. */
interface ClMemory {
    MemorySegment handle();
}
