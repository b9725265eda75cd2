package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * A command queue on the test device, with the buffers and kernels a test makes on it, for tests that launch kernels
 * directly rather than through OpenClBackend. Everything is released by {@link #close}.
 */
final class DeviceQueue implements AutoCloseable {
    record Memory(MemorySegment handle) implements ClMemory {}

    final DeviceContext device;
    final MemorySegment queue;
    private final Arena arena = Arena.ofShared();
    private final List<MemorySegment> buffers = new ArrayList<>();
    private final List<ClKernel> kernels = new ArrayList<>();

    DeviceQueue(OpenCl.Device device) {
        this.device = DeviceContext.of(device);
        MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
        this.queue = clCreateCommandQueue(this.device.context, this.device.deviceId, 0, status);
        ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateCommandQueue");
    }

    ClKernel kernel(MemorySegment program, String name) {
        ClKernel kernel = new ClKernel(program, name, arena);
        kernels.add(kernel);
        return kernel;
    }

    /** A read-only buffer holding a copy of {@code bytes}. */
    ClMemory upload(MemorySegment bytes) {
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment host = bytes.isNative() ? bytes : staging.allocate(bytes.byteSize(), 16).copyFrom(bytes);
            return create(CL_MEM_READ_ONLY() | CL_MEM_COPY_HOST_PTR(), bytes.byteSize(), host);
        }
    }

    ClMemory upload(float[] values) {
        try (Arena staging = Arena.ofConfined()) {
            return upload(staging.allocateFrom(ValueLayout.JAVA_FLOAT, values));
        }
    }

    ClMemory upload(int[] values) {
        try (Arena staging = Arena.ofConfined()) {
            return upload(staging.allocateFrom(ValueLayout.JAVA_INT, values));
        }
    }

    /** A buffer of {@code length} floats for a kernel to write. */
    ClMemory floats(long length) {
        return create(CL_MEM_READ_WRITE(), length * Float.BYTES, MemorySegment.NULL);
    }

    /** The first {@code length} floats of {@code buffer}, once the queue has run everything before. */
    float[] read(ClMemory buffer, int length) {
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment host = staging.allocate(ValueLayout.JAVA_FLOAT, length);
            ClStatus.check(clEnqueueReadBuffer(queue, buffer.handle(), CL_TRUE(), 0, host.byteSize(), host, 0,
                    MemorySegment.NULL, MemorySegment.NULL), "clEnqueueReadBuffer");
            return host.toArray(ValueLayout.JAVA_FLOAT);
        }
    }

    /** The first {@code length} bytes of {@code buffer}, once the queue has run everything before. */
    byte[] readBytes(ClMemory buffer, long length) {
        try (Arena staging = Arena.ofConfined()) {
            MemorySegment host = staging.allocate(length);
            ClStatus.check(clEnqueueReadBuffer(queue, buffer.handle(), CL_TRUE(), 0, length, host, 0,
                    MemorySegment.NULL, MemorySegment.NULL), "clEnqueueReadBuffer");
            return host.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    private ClMemory create(long flags, long bytes, MemorySegment host) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment status = call.allocate(ValueLayout.JAVA_INT);
            MemorySegment handle = clCreateBuffer(device.context, flags, Math.max(1, bytes), host, status);
            ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateBuffer(" + bytes + " bytes)");
            buffers.add(handle);
            return new Memory(handle);
        }
    }

    @Override
    public void close() {
        clFinish(queue);
        kernels.forEach(ClKernel::release);
        buffers.forEach(b -> clReleaseMemObject(b));
        clReleaseCommandQueue(queue);
        arena.close();
    }
}
