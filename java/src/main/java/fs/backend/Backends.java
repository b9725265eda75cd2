package fs.backend;

import fs.FsException;
import fs.backend.cpu.VectorBackend;

/** Creates the backend the user asked for with {@code --backend}, {@code --device} and {@code --threads}. */
public final class Backends {
    private Backends() {}

    /** The names {@code --backend} accepts. */
    public static final String KINDS = "auto, cpu, opencl";

    /**
     * {@code kind} is auto, cpu or opencl; {@code device} (null: the first) picks an OpenCL device; {@code threads}
     * is the CPU backend's thread count.
     */
    public static Backend create(String kind, Integer device, int threads) {
        return switch (kind) {
            case "auto", "cpu" -> new VectorBackend(threads);
            case "opencl" -> throw new FsException("--backend opencl is not available in this build yet; use --backend cpu");
            default -> throw new FsException("--backend " + kind + " is unknown; choose one of " + KINDS);
        };
    }
}
