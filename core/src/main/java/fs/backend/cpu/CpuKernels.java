package fs.backend.cpu;

import fs.FsException;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Path;
import java.util.function.UnaryOperator;

/**
 * Which kernels the CPU backend's matmuls run. "native" (the default) is libfscpu's int8 kernels
 * ({@link NativeKernels}) for the weight formats it has, the Vector API for the rest and for every other op. "java"
 * is the Vector API kernels on float activations alone, exact to float32 rounding: the oracle. Chosen by the system
 * property {@code fs.cpu.kernels} or else the environment variable {@code FS_CPU_KERNELS}; with native,
 * {@code fs.cpu.isa} / {@code FS_CPU_ISA} forces a variant (avx512, avxvnni, avx2, neon, scalar; by default the best this CPU
 * runs) and {@code fs.cpu.library} / {@code FS_CPU_LIBRARY} names the library file (by default the one fs-core was
 * built with). A forced variant this CPU cannot run is an error; native kernels that cannot be loaded (no library
 * for this platform, a build without a C compiler) leave the Vector API running, and the backend's description
 * says why. {@code fs.cpu.repack} / {@code FS_CPU_REPACK} = on (the default) or off: whether the native kernels'
 * weights of the formats with a repacked layout (Q4_K, Q4_0; Q8_0, Q6_K, Q2_K and Q3_K on avx512 and avx2: 16 rows
 * interleaved, {@link Repacker}) are repacked at upload; the same floats either way, so off is for measuring what
 * repacking gains and costs.
 *
 * <p>Native is the default because on every file of models/q-tied its logits are no further from the exact golden
 * than llama.cpp's own (NativeDenseGoldenTest) and on ../shared/trained its KL divergence from bf16 is no larger
 * than llama.cpp's (docs/PERFORMANCE.md), at several times the Vector API's speed on quantized weights.
 */
public final class CpuKernels {
    private static final CpuKernels VECTOR_API = new CpuKernels(null, null, false);

    /** The native kernels the matmuls run, or null for the Vector API alone. */
    private final NativeKernels nativeKernels;
    /** Why the native kernels asked for are not running, or null. */
    private final String unavailable;
    /** Whether weights of the formats the native kernels have a repacked layout for are repacked at upload. */
    private final boolean repacks;

    private CpuKernels(NativeKernels nativeKernels, String unavailable, boolean repacks) {
        this.nativeKernels = nativeKernels;
        this.unavailable = unavailable;
        this.repacks = repacks;
    }

    /** A setting's value and where it came from, for messages: the property if set, else the variable. */
    private record Setting(String name, String value) {
        static Setting read(String property, String variable, UnaryOperator<String> properties,
                UnaryOperator<String> variables) {
            String fromProperty = properties.apply(property);
            if (fromProperty != null && !fromProperty.isEmpty()) return new Setting(property, fromProperty);
            String fromVariable = variables.apply(variable);
            return new Setting(variable, fromVariable == null || fromVariable.isEmpty() ? null : fromVariable);
        }

        @Override
        public String toString() {
            return name + "=" + value;
        }
    }

    /** The kernels the system properties and the environment ask for: native unless they say java. */
    public static CpuKernels fromEnvironment() {
        return fromSettings(System::getProperty, System::getenv);
    }

    /** As {@link #fromEnvironment}, reading the properties and the variables from these two. */
    static CpuKernels fromSettings(UnaryOperator<String> properties, UnaryOperator<String> variables) {
        Setting kernels = Setting.read("fs.cpu.kernels", "FS_CPU_KERNELS", properties, variables);
        if ("java".equals(kernels.value())) return VECTOR_API;
        if (kernels.value() != null && !kernels.value().equals("native")) {
            throw new FsException(kernels + " is unknown; choose native or java");
        }
        Setting repack = Setting.read("fs.cpu.repack", "FS_CPU_REPACK", properties, variables);
        if (repack.value() != null && !repack.value().equals("on") && !repack.value().equals("off")) {
            throw new FsException(repack + " is unknown; choose on or off");
        }
        CpuKernels chosen = nativeKernels(Setting.read("fs.cpu.isa", "FS_CPU_ISA", properties, variables),
                Setting.read("fs.cpu.library", "FS_CPU_LIBRARY", properties, variables));
        return "off".equals(repack.value()) ? chosen.withoutRepacking() : chosen;
    }

    /** The Vector API kernels alone. */
    public static CpuKernels vectorApi() {
        return VECTOR_API;
    }

    /**
     * The native kernels of variant {@code isa} (null: the best this CPU runs) from the library fs-core was built
     * with, or the Vector API with the reason when that library cannot be loaded.
     */
    public static CpuKernels nativeKernels(String isa) {
        return nativeKernels(new Setting("isa", isa), new Setting("library", null));
    }

    /** As {@link #nativeKernels(String)}, from the library file {@code library}. */
    static CpuKernels nativeKernels(String isa, Path library) {
        return nativeKernels(new Setting("isa", isa), new Setting("library", library.toString()));
    }

    private static CpuKernels nativeKernels(Setting isa, Setting library) {
        SymbolLookup symbols;
        String chosen;
        try {
            symbols = NativeLibrary.load(library.value() == null ? NativeLibrary.bundled() : Path.of(library.value()));
            chosen = isa.value() == null ? NativeKernels.best(symbols) : isa.value();
        } catch (FsException e) {
            return new CpuKernels(null, "native kernels unavailable: " + e.getMessage(), false);
        }
        if (!NativeKernels.ISAS.contains(chosen)) {
            throw new FsException(isa + " is unknown; choose one of " + String.join(", ", NativeKernels.ISAS));
        }
        if (!NativeKernels.runs(symbols, chosen)) {
            throw new FsException(isa + ": this CPU cannot run the " + chosen + " native kernels (it runs "
                    + String.join(", ", NativeKernels.runnable(symbols)) + ")");
        }
        try {
            return new CpuKernels(NativeKernels.bind(symbols, chosen), null, true);
        } catch (FsException e) {
            return new CpuKernels(null, "native kernels unavailable: " + e.getMessage(), false);
        }
    }

    /** These kernels with every weight left as stored: the native matmuls read the file's layout. */
    CpuKernels withoutRepacking() {
        return repacks ? new CpuKernels(nativeKernels, unavailable, false) : this;
    }

    /** Whether the backend repacks the weights the native kernels have a repacked layout for. */
    boolean repacks() {
        return repacks;
    }

    /** The native kernels to run, or null for the Vector API alone. */
    NativeKernels nativeKernels() {
        return nativeKernels;
    }

    /** Why native kernels that were asked for are not running, or null. */
    String unavailable() {
        return unavailable;
    }
}
