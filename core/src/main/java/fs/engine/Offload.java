package fs.engine;

import fs.FsException;
import java.util.List;

/**
 * How much of a model goes to the OpenCL device, as llama.cpp's flags say it: {@code gpuLayers} (-ngl) counts layers
 * from the output end, the last N layers on the device, and the output (final norm and lm_head) too when N exceeds the
 * layer count; {@link #ALL} is every layer and the output, {@link #AUTO} as many as the device's memory holds.
 * {@code cpuMoeLayers} (--n-cpu-moe; {@link #ALL} for --cpu-moe) keeps the feed-forward blocks of the first N layers
 * that are mixtures of experts on the CPU, the router and the experts, while their attention runs where -ngl says;
 * {@code cpuTensors} (-ot PATTERN=CPU) keeps the feed-forward blocks whose tensors they name there too.
 * {@code fitTarget} (-fitt, llama.cpp's --fit-target) is what -ngl auto, and a re-plan after the device ran out of
 * memory, leave free on the device for the buffers of a forward, the driver and other programs.
 */
public record Offload(int gpuLayers, int cpuMoeLayers, List<TensorOverride> cpuTensors, long fitTarget) {
    /** Every layer (and for -ngl the output too). */
    public static final int ALL = Integer.MAX_VALUE;
    /** -ngl auto: as many layers as fit the device. */
    public static final int AUTO = -1;
    /** llama.cpp's --fit-target default, 1,024 MiB. */
    public static final long DEFAULT_FIT_TARGET = 1L << 30;

    public Offload {
        if (gpuLayers < AUTO) throw new FsException("-ngl must be a number of layers (0 or more), auto or all, got "
                + gpuLayers);
        if (cpuMoeLayers < 0) throw new FsException("--n-cpu-moe must be 0 or more, got " + cpuMoeLayers);
        if (fitTarget < 0) throw new FsException("-fitt must be 0 or more MiB, got " + (fitTarget >> 20));
        cpuTensors = List.copyOf(cpuTensors);
    }

    /** With the default fit target. */
    public Offload(int gpuLayers, int cpuMoeLayers, List<TensorOverride> cpuTensors) {
        this(gpuLayers, cpuMoeLayers, cpuTensors, DEFAULT_FIT_TARGET);
    }

    /** The same offload with {@code layers} on the device: how a re-plan changes it. */
    Offload withGpuLayers(int layers) {
        return new Offload(layers, cpuMoeLayers, cpuTensors, fitTarget);
    }

    /** -ngl's value: a count (0 or more), auto or all; anything else is an FsException in one line. */
    public static int gpuLayers(String value) {
        return switch (value) {
            case "auto" -> AUTO;
            case "all" -> ALL;
            default -> {
                int layers;
                try {
                    layers = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    throw new FsException("-ngl must be a number of layers (0 or more), auto or all, got '" + value
                            + "'");
                }
                if (layers < 0) {
                    throw new FsException("-ngl must be a number of layers (0 or more), auto or all, got " + layers);
                }
                yield layers;
            }
        };
    }

    /** How -ngl spells {@code gpuLayers}. */
    public static String spelling(int gpuLayers) {
        return gpuLayers == AUTO ? "auto" : gpuLayers == ALL ? "all" : Integer.toString(gpuLayers);
    }
}
