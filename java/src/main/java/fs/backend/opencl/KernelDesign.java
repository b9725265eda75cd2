package fs.backend.opencl;

/**
 * Which kernel family a backend launches. GPU: work-groups with local-memory reductions and tiles. CPU: work-items
 * that each own whole rows, without barriers (what a CPU device such as PoCL runs well).
 */
enum KernelDesign {
    GPU, CPU;

    static KernelDesign of(OpenCl.Device device) {
        return device.type() == OpenCl.DeviceType.CPU ? CPU : GPU;
    }
}
