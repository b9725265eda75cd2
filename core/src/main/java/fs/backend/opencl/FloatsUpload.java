package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import fs.backend.opencl.OpenClBackend.ClBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

/**
 * A few floats the host passes a kernel per call (an expert sum's slot weights), written to one device buffer without
 * blocking. The write must read host memory that stays unchanged until the queue has run it, so each write since the
 * queue was last drained gets its own stretch of host staging; staging that fills up is kept until the queue is drained
 * (a forward's last read or argmax) and writes go on in a new one twice its size, so a forward never waits here. The
 * device buffer is the same for every write: the queue is in order, so a write runs after the kernels that read the
 * previous one.
 */
final class FloatsUpload {
    /** Bytes between writes' stretches of the staging. */
    private static final long ALIGN = 64;
    /** Full staging kept beyond this many bytes (ops enqueued one by one, never read) is freed after a clFinish. */
    private static final long MOST_RETIRED = 64L << 20;

    private final MemorySegment queue;
    private final String what;
    /** Allocates a device buffer of the given length in floats. */
    private final LongFunction<ClBuffer> allocate;
    private Arena arena = Arena.ofShared();
    private MemorySegment staging;
    /** Bytes of {@link #staging} that writes since the queue was last drained may still be reading. */
    private long used;
    /** Full staging that writes may still be reading, freed when the queue is drained. */
    private final List<Arena> retired = new ArrayList<>();
    private long retiredBytes;
    private ClBuffer buffer;

    FloatsUpload(MemorySegment queue, String what, LongFunction<ClBuffer> allocate) {
        this.queue = queue;
        this.what = what;
        this.allocate = allocate;
        this.staging = arena.allocate(64 * 1024, ALIGN);
    }

    /** The device buffer holding {@code values[0, count)} once the queue reaches this write. */
    ClBuffer of(float[] values, int count) {
        long bytes = (long) count * Float.BYTES;
        long at = (used + ALIGN - 1) / ALIGN * ALIGN;
        if (at + bytes > staging.byteSize()) {
            long size = Math.max(bytes, 2 * staging.byteSize());
            if (used > 0) {
                retired.add(arena);
                retiredBytes += staging.byteSize();
                if (retiredBytes > MOST_RETIRED) {
                    ClStatus.check(clFinish(queue), "clFinish");
                    queueDrained();
                }
            } else {
                arena.close();
            }
            arena = Arena.ofShared();
            staging = arena.allocate(size, ALIGN);
            used = 0;
            at = 0;
        }
        if (buffer == null || buffer.length() < count) buffer = allocate.apply(Math.max(count, 4096));
        if (count == 0) return buffer;
        MemorySegment host = staging.asSlice(at, bytes);
        MemorySegment.copy(values, 0, host, ValueLayout.JAVA_FLOAT, 0, count);
        ClStatus.check(clEnqueueWriteBuffer(queue, buffer.handle(), CL_FALSE(), 0, bytes, host, 0, MemorySegment.NULL,
                MemorySegment.NULL), "clEnqueueWriteBuffer(" + what + ")");
        used = at + bytes;
        return buffer;
    }

    /** A blocking call on the queue has returned: every write is done, and the staging is free again. */
    void queueDrained() {
        used = 0;
        retired.forEach(Arena::close);
        retired.clear();
        retiredBytes = 0;
    }

    /** Frees the host memory; the queue must be finished. */
    void close() {
        queueDrained();
        arena.close();
    }
}
