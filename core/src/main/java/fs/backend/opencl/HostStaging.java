package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import fs.HumanSize;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Page-locked host memory a transfer is written from or read into: an OpenCL buffer the driver allocates in host
 * memory (CL_MEM_ALLOC_HOST_PTR), mapped once for as long as it is used, whose mapping is the host pointer of
 * clEnqueueRead/WriteBuffer. That is NVIDIA's documented way to pinned memory: a transfer from it runs by DMA at the
 * bus's speed, where one from pageable memory goes through the driver's own staging, a copy more. Reused across
 * transfers and grown when one needs more (the previous buffer unmapped and released); its contents are not kept
 * across {@link #atLeast}. The buffer is host memory, so it is not counted against the device's.
 */
final class HostStaging {
    private final MemorySegment context;
    private final MemorySegment queue;
    private final long minimum;
    private MemorySegment buffer = MemorySegment.NULL;
    private MemorySegment memory = MemorySegment.NULL;
    /** The mapping's lifetime: closed at unmap, so that a segment kept past it throws instead of reading freed memory. */
    private Arena mapping;

    /** Staging on {@code queue} (of {@code context}) that is never smaller than {@code minimum} bytes once used. */
    HostStaging(MemorySegment context, MemorySegment queue, long minimum) {
        this.context = context;
        this.queue = queue;
        this.minimum = Math.max(1, minimum);
    }

    /** At least {@code bytes} of page-locked host memory, aligned as the driver maps it (a page, in practice). */
    @SuppressWarnings("restricted") // the mapping's size is the size just mapped
    MemorySegment atLeast(long bytes) {
        if (memory.byteSize() >= bytes) return memory;
        long size = Math.max(minimum, Math.max(bytes, 2 * memory.byteSize()));
        release();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
            String what = "pinned host staging, " + HumanSize.of(size);
            MemorySegment created = clCreateBuffer(context, CL_MEM_READ_WRITE() | CL_MEM_ALLOC_HOST_PTR(), size,
                    MemorySegment.NULL, status);
            ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateBuffer(" + what + ")");
            MemorySegment mapped = clEnqueueMapBuffer(queue, created, CL_TRUE(), CL_MAP_READ() | CL_MAP_WRITE(), 0,
                    size, 0, MemorySegment.NULL, MemorySegment.NULL, status);
            int mapStatus = status.get(ValueLayout.JAVA_INT, 0);
            if (mapStatus != CL_SUCCESS()) clReleaseMemObject(created);
            ClStatus.check(mapStatus, "clEnqueueMapBuffer(" + what + ")");
            buffer = created;
            mapping = Arena.ofShared();
            memory = mapped.reinterpret(size, mapping, null);
        }
        return memory;
    }

    /** Unmaps and releases the memory; transfers from it must be done (every one is blocking, or the queue finished). */
    void close() {
        release();
    }

    private void release() {
        if (buffer.equals(MemorySegment.NULL)) return;
        ClStatus.check(clEnqueueUnmapMemObject(queue, buffer, memory, 0, MemorySegment.NULL, MemorySegment.NULL),
                "clEnqueueUnmapMemObject(pinned host staging)");
        ClStatus.check(clReleaseMemObject(buffer), "clReleaseMemObject(pinned host staging)");
        mapping.close();
        buffer = MemorySegment.NULL;
        memory = MemorySegment.NULL;
    }
}
