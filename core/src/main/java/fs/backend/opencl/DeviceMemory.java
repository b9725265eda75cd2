package fs.backend.opencl;

import fs.FsException;
import fs.HumanSize;

/**
 * Device memory bookkeeping: every allocation is checked against the device's limits before it is made, so a model
 * that does not fit fails with the numbers ({@link DeviceOutOfMemoryException}) rather than with
 * CL_MEM_OBJECT_ALLOCATION_FAILURE halfway through.
 */
final class DeviceMemory {
    private final String device;
    private final long globalMemSize;
    private final long maxAllocSize;
    private long reserved;

    DeviceMemory(String device, long globalMemSize, long maxAllocSize) {
        this.device = device;
        this.globalMemSize = globalMemSize;
        this.maxAllocSize = maxAllocSize;
    }

    /** Counts {@code bytes} for {@code what} (a tensor or buffer name) or throws saying why they do not fit. */
    void reserve(String what, long bytes) {
        if (bytes > maxAllocSize) {
            throw new FsException(what + " needs " + HumanSize.of(bytes) + " in one buffer but " + device
                    + " allows at most " + HumanSize.of(maxAllocSize)
                    + " (CL_DEVICE_MAX_MEM_ALLOC_SIZE); use --backend cpu");
        }
        if (reserved + bytes > globalMemSize) {
            throw new DeviceOutOfMemoryException("the model does not fit on " + device + ": " + what + " (" + HumanSize.of(bytes)
                    + ") would bring device memory in use to " + HumanSize.of(reserved + bytes) + ", more than its "
                    + HumanSize.of(globalMemSize) + " (CL_DEVICE_GLOBAL_MEM_SIZE): offload fewer layers (-ngl), or use "
                    + "--backend cpu, a smaller model or a shorter --ctx", reserved);
        }
        reserved += bytes;
    }

    /** Stops counting {@code bytes} of a buffer that was released. */
    void release(long bytes) {
        reserved -= bytes;
    }

    long reserved() {
        return reserved;
    }
}
