package fs.backend.opencl;

import java.util.Locale;

/**
 * Which kernel family a backend launches. GPU: work-groups with local-memory reductions and tiles. CPU: work-items
 * that each own whole rows, without barriers (what a CPU device such as PoCL runs well). Each design's launches are
 * one {@link Launcher}.
 */
enum KernelDesign {
    GPU, CPU;

    static KernelDesign of(OpenCl.Device device) {
        return device.type() == OpenCl.DeviceType.CPU ? CPU : GPU;
    }

    /** This design's kernel of an op whose kernels differ by design: {@code rmsnorm} is rmsnorm_gpu or rmsnorm_cpu. */
    String kernel(String op) {
        return op + "_" + name().toLowerCase(Locale.ROOT);
    }
}
