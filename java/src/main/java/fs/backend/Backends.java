package fs.backend;

import fs.FsException;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.OpenCl;
import fs.backend.opencl.OpenClBackend;
import java.io.PrintWriter;

/** Creates the backend the user asked for with {@code --backend}, {@code --device} and {@code --threads}. */
public final class Backends {
    private Backends() {}

    /** The names {@code --backend} accepts. */
    public static final String KINDS = "auto, cpu, java, opencl";

    /**
     * {@code kind} is auto, cpu, java or opencl; {@code device} (null: auto's pick) picks an OpenCL device;
     * {@code threads} is the CPU backend's thread count. cpu runs the CPU's default kernels (native int8 matmuls
     * where the library loads, {@link CpuKernels#fromEnvironment}); java runs the CPU backend on the Vector API
     * kernels alone, the exact path. auto takes an OpenCL GPU when there is one and otherwise the CPU, saying why
     * on {@code log}; opencl also accepts OpenCL CPU devices (PoCL) and fails when there is none.
     */
    public static Backend create(String kind, Integer device, int threads, PrintWriter log) {
        return switch (kind) {
            case "cpu" -> new VectorBackend(threads);
            case "java" -> new VectorBackend(threads, CpuKernels.vectorApi());
            case "opencl" -> switch (OpenCl.select(true, device)) {
                case OpenCl.Selection.Selected selected -> new OpenClBackend(selected.device());
                case OpenCl.Selection.NotSelected notSelected ->
                        throw new FsException("--backend opencl: " + notSelected.reason());
            };
            case "auto" -> switch (OpenCl.select(false, device)) {
                case OpenCl.Selection.Selected selected -> {
                    try {
                        yield new OpenClBackend(selected.device());
                    } catch (FsException e) { // e.g. the kernels do not build on this driver: the log says why
                        log.println("fs: running on the CPU: " + e.getMessage());
                        log.flush();
                        yield new VectorBackend(threads);
                    }
                }
                case OpenCl.Selection.NotSelected notSelected -> {
                    log.println("fs: running on the CPU: " + notSelected.reason());
                    log.flush();
                    yield new VectorBackend(threads);
                }
            };
            default -> throw new FsException("--backend " + kind + " is unknown; choose one of " + KINDS);
        };
    }
}
