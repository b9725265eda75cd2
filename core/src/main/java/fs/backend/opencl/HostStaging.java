package fs.backend.opencl;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Host memory a transfer is written from or read into, reused across transfers and grown when one needs more (the
 * previous memory freed). Its contents are not kept across {@link #atLeast}.
 */
final class HostStaging {
    private final long minimum;
    private Arena arena = Arena.ofShared();
    private MemorySegment memory = MemorySegment.NULL;

    /** Staging that is never smaller than {@code minimum} bytes once used. */
    HostStaging(long minimum) {
        this.minimum = minimum;
    }

    /** At least {@code bytes} of host memory, 64-byte aligned. */
    MemorySegment atLeast(long bytes) {
        if (memory.byteSize() < bytes) {
            arena.close();
            arena = Arena.ofShared();
            memory = arena.allocate(Math.max(minimum, Math.max(bytes, 2 * memory.byteSize())), 64);
        }
        return memory;
    }

    void close() {
        arena.close();
    }
}
