package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import fs.backend.RowPositions;
import fs.backend.opencl.OpenClBackend.ClBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.LongFunction;

/**
 * The device copy of a forward's {@link RowPositions}, (position, sequence) per row as int2: written when a forward
 * first passes them, then the same buffer for the rest of that forward's layers. The write does not block: the first
 * rope comes after the layer's matmuls, and waiting for them there would leave the device idle while the host goes on
 * enqueuing. So the host memory it is written from must stay unchanged until the queue has run it, which the backend
 * reports by {@link #queueDrained}.
 */
final class PositionsUpload {
    private final MemorySegment queue;
    /** Allocates a device buffer of the given length in floats (4 bytes, like the ints it holds). */
    private final LongFunction<ClBuffer> allocate;
    private final HostStaging staging;
    /** The row positions last uploaded (an immutable object: the same one means the same upload) and their buffer. */
    private RowPositions uploaded;
    private ClBuffer buffer;
    /** Whether the last write may still be reading {@link #staging}. */
    private boolean inFlight;

    PositionsUpload(MemorySegment context, MemorySegment queue, LongFunction<ClBuffer> allocate) {
        this.queue = queue;
        this.allocate = allocate;
        this.staging = new HostStaging(context, queue, 4096);
    }

    /** The device buffer holding {@code placed}, written now unless it was the last one written. */
    ClBuffer of(RowPositions placed) {
        if (placed == uploaded) return buffer;
        // Only a caller with no blocking call since the last upload (a test running ops one by one) waits here.
        if (inFlight) ClStatus.check(clFinish(queue), "clFinish");
        inFlight = false;
        int rows = placed.rows();
        long ints = 2L * rows, bytes = ints * Integer.BYTES;
        if (buffer == null || buffer.length() < ints) buffer = allocate.apply(Math.max(ints, 512));
        MemorySegment host = staging.atLeast(bytes);
        for (int r = 0; r < rows; r++) {
            host.setAtIndex(ValueLayout.JAVA_INT, 2L * r, placed.position(r));
            host.setAtIndex(ValueLayout.JAVA_INT, 2L * r + 1, placed.sequence(r));
        }
        ClStatus.check(clEnqueueWriteBuffer(queue, buffer.handle(), CL_FALSE(), 0, bytes, host, 0,
                MemorySegment.NULL, MemorySegment.NULL), "clEnqueueWriteBuffer(row positions)");
        inFlight = true;
        uploaded = placed;
        return buffer;
    }

    /**
     * A blocking call on the queue (a read, an argmax, a blocking write) has returned: the queue is in order, so the
     * last write is done.
     */
    void queueDrained() {
        inFlight = false;
    }

    /** Frees the host memory; the queue must be finished. */
    void close() {
        staging.close();
    }
}
