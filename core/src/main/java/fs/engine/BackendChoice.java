package fs.engine;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/** Where a model runs, as {@code --backend} and the library's options spell it. */
public enum BackendChoice {
    /** An OpenCL GPU when there is one and the model fits it, else the CPU (saying why). */
    AUTO,
    /** The CPU on its default kernels (native int8 matmuls where the library loads, else the Vector API). */
    CPU,
    /** The CPU on the exact Vector API kernels alone. */
    JAVA,
    /** An OpenCL device, GPU or CPU (PoCL); failing when there is none. */
    OPENCL;

    /** The spellings, in order: "auto, cpu, java, opencl". */
    public static final String SPELLINGS =
            Arrays.stream(values()).map(BackendChoice::spelling).collect(Collectors.joining(", "));

    /** How the command line and the library spell it: the name in lower case. */
    public String spelling() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The choice spelled {@code spelling} (exactly, in lower case); empty for anything else. */
    public static Optional<BackendChoice> named(String spelling) {
        return Arrays.stream(values()).filter(choice -> choice.spelling().equals(spelling)).findFirst();
    }
}
