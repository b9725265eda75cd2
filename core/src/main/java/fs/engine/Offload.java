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
 */
public record Offload(int gpuLayers, int cpuMoeLayers, List<TensorOverride> cpuTensors) {
    /** Every layer (and for -ngl the output too). */
    public static final int ALL = Integer.MAX_VALUE;
    /** -ngl auto: as many layers as fit the device. */
    public static final int AUTO = -1;

    public Offload {
        if (gpuLayers < AUTO) throw new FsException("-ngl must be a number of layers (0 or more), auto or all, got "
                + gpuLayers);
        if (cpuMoeLayers < 0) throw new FsException("--n-cpu-moe must be 0 or more, got " + cpuMoeLayers);
        cpuTensors = List.copyOf(cpuTensors);
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
