package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * One cl_kernel: typed argument setting and launches on a queue. An argument set to the value it already holds is not
 * set again, and launches reuse one native segment for their sizes, so a decode step allocates nothing here. Not
 * thread-safe (kernel arguments are state).
 */
final class ClKernel {
    /** What an argument slot last held, so that an unchanged argument costs no clSetKernelArg. */
    private enum Kind { UNSET, MEMORY, INT, LONG, FLOAT, LOCAL }

    /** More than any kernel of ours takes. */
    private static final int MAX_ARGS = 16;

    private final String name;
    private final MemorySegment kernel;
    private final MemorySegment value;
    /** Global sizes at 0..2, local sizes at 3..5. */
    private final MemorySegment sizes;
    private final MemorySegment localSizes;
    private final Kind[] kinds = new Kind[MAX_ARGS];
    private final long[] bits = new long[MAX_ARGS];

    ClKernel(MemorySegment program, String name, Arena arena) {
        this.name = name;
        this.value = arena.allocate(ValueLayout.JAVA_LONG);
        this.sizes = arena.allocate(ValueLayout.JAVA_LONG, 6);
        this.localSizes = sizes.asSlice(3 * Long.BYTES);
        Arrays.fill(kinds, Kind.UNSET);
        MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
        this.kernel = clCreateKernel(program, arena.allocateFrom(name), status);
        ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateKernel(" + name + ")");
    }

    /** Argument {@code index} is the buffer {@code memory}. */
    ClKernel arg(int index, ClMemory memory) {
        MemorySegment handle = memory.handle();
        if (unchanged(index, Kind.MEMORY, handle.address())) return this;
        value.set(ValueLayout.ADDRESS, 0, handle);
        return set(index, ValueLayout.ADDRESS.byteSize(), value);
    }

    /** Argument {@code index} is the cl int {@code v}. */
    ClKernel arg(int index, int v) {
        if (unchanged(index, Kind.INT, v)) return this;
        value.set(ValueLayout.JAVA_INT, 0, v);
        return set(index, Integer.BYTES, value);
    }

    /** Argument {@code index} is the cl long {@code v}. */
    ClKernel arg(int index, long v) {
        if (unchanged(index, Kind.LONG, v)) return this;
        value.set(ValueLayout.JAVA_LONG, 0, v);
        return set(index, Long.BYTES, value);
    }

    /** Argument {@code index} is the cl float {@code v}. */
    ClKernel arg(int index, float v) {
        if (unchanged(index, Kind.FLOAT, Float.floatToRawIntBits(v))) return this;
        value.set(ValueLayout.JAVA_FLOAT, 0, v);
        return set(index, Float.BYTES, value);
    }

    /** Argument {@code index} is {@code bytes} of {@code __local} memory. */
    ClKernel local(int index, long bytes) {
        if (unchanged(index, Kind.LOCAL, bytes)) return this;
        return set(index, bytes, MemorySegment.NULL);
    }

    private boolean unchanged(int index, Kind kind, long newBits) {
        if (kinds[index] == kind && bits[index] == newBits) return true;
        kinds[index] = kind;
        bits[index] = newBits;
        return false;
    }

    private ClKernel set(int index, long size, MemorySegment pointer) {
        int status = clSetKernelArg(kernel, index, size, pointer);
        if (status != CL_SUCCESS()) {
            kinds[index] = Kind.UNSET;
            ClStatus.check(status, "clSetKernelArg(" + name + ", " + index + ")");
        }
        return this;
    }

    /** Enqueues a 1-D launch; {@code local} 0 lets the driver choose the work-group size. */
    void run(MemorySegment queue, long global, long local) {
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 0, global);
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 3, local);
        enqueue(queue, 1, local != 0);
    }

    /** Enqueues a 2-D launch; {@code local0} 0 lets the driver choose the work-group size. */
    void run(MemorySegment queue, long global0, long global1, long local0, long local1) {
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 0, global0);
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 1, global1);
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 3, local0);
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 4, local1);
        enqueue(queue, 2, local0 != 0);
    }

    /** Enqueues a 3-D launch with work-groups of the driver's choice. */
    void run(MemorySegment queue, long global0, long global1, long global2) {
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 0, global0);
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 1, global1);
        sizes.setAtIndex(ValueLayout.JAVA_LONG, 2, global2);
        enqueue(queue, 3, false);
    }

    private void enqueue(MemorySegment queue, int dimensions, boolean withLocal) {
        int status = clEnqueueNDRangeKernel(queue, kernel, dimensions, MemorySegment.NULL, sizes,
                withLocal ? localSizes : MemorySegment.NULL, 0, MemorySegment.NULL, MemorySegment.NULL);
        if (status != CL_SUCCESS()) ClStatus.check(status, "clEnqueueNDRangeKernel(" + name + ")");
    }

    /** The largest work-group this kernel can run with on {@code device} (registers and local memory permitting). */
    long maxWorkGroupSize(MemorySegment device) {
        value.set(ValueLayout.JAVA_LONG, 0, 0);
        ClStatus.check(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE(), Long.BYTES, value,
                MemorySegment.NULL), "clGetKernelWorkGroupInfo(" + name + ")");
        return value.get(ValueLayout.JAVA_LONG, 0);
    }

    void release() {
        clReleaseKernel(kernel);
    }
}
