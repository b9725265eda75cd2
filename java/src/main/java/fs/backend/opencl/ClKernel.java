package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** One cl_kernel: typed argument setting and launches on a queue. Not thread-safe (kernel arguments are state). */
final class ClKernel {
    /** A {@code __local} argument of this many bytes. */
    record Local(long bytes) {}

    private final String name;
    private final MemorySegment kernel;
    private final MemorySegment value;
    private final MemorySegment sizes;

    ClKernel(MemorySegment program, String name, Arena arena) {
        this.name = name;
        this.value = arena.allocate(ValueLayout.JAVA_LONG);
        this.sizes = arena.allocate(ValueLayout.JAVA_LONG, 6);
        MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
        this.kernel = clCreateKernel(program, arena.allocateFrom(name), status);
        ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateKernel(" + name + ")");
    }

    /**
     * Sets arguments 0.. in order: a {@link ClMemory} is a buffer, Integer/Long/Float are cl int/long/float, and
     * {@link Local} reserves local memory.
     */
    ClKernel args(Object... args) {
        for (int i = 0; i < args.length; i++) {
            long size;
            MemorySegment pointer = value;
            switch (args[i]) {
                case ClMemory memory -> {
                    value.set(ValueLayout.ADDRESS, 0, memory.handle());
                    size = ValueLayout.ADDRESS.byteSize();
                }
                case Integer v -> {
                    value.set(ValueLayout.JAVA_INT, 0, v);
                    size = Integer.BYTES;
                }
                case Long v -> {
                    value.set(ValueLayout.JAVA_LONG, 0, v);
                    size = Long.BYTES;
                }
                case Float v -> {
                    value.set(ValueLayout.JAVA_FLOAT, 0, v);
                    size = Float.BYTES;
                }
                case Local local -> {
                    pointer = MemorySegment.NULL;
                    size = local.bytes();
                }
                default -> throw new IllegalArgumentException("unsupported kernel argument " + args[i]);
            }
            ClStatus.check(clSetKernelArg(kernel, i, size, pointer), "clSetKernelArg(" + name + ", " + i + ")");
        }
        return this;
    }

    /** Enqueues the kernel; {@code local} null lets the driver choose the work-group size. */
    void run(MemorySegment queue, long[] global, long[] local) {
        for (int d = 0; d < global.length; d++) {
            sizes.setAtIndex(ValueLayout.JAVA_LONG, d, global[d]);
            if (local != null) sizes.setAtIndex(ValueLayout.JAVA_LONG, 3 + d, local[d]);
        }
        MemorySegment localSizes = local == null ? MemorySegment.NULL : sizes.asSlice(3 * Long.BYTES);
        ClStatus.check(clEnqueueNDRangeKernel(queue, kernel, global.length, MemorySegment.NULL, sizes, localSizes, 0,
                MemorySegment.NULL, MemorySegment.NULL), "clEnqueueNDRangeKernel(" + name + ")");
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
