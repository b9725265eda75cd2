package fs.backend.opencl;

import fs.FsException;

/**
 * An OpenCL device that cannot hold one more allocation: by fs's count against its memory, or the driver's
 * CL_MEM_OBJECT_ALLOCATION_FAILURE or CL_OUT_OF_RESOURCES. {@code inUse} is the bytes the backend held when it ran out,
 * what the device was seen to hold, from which a smaller split can be planned.
 */
public final class DeviceOutOfMemoryException extends FsException {
    private final long inUse;

    public DeviceOutOfMemoryException(String message, long inUse) {
        super(message);
        this.inUse = inUse;
    }

    /** Bytes of device memory the backend held when the allocation failed. */
    public long inUse() {
        return inUse;
    }
}
