package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.cpu.NativeKernels.Activations;
import fs.format.ReferenceDequantizer;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.safetensors.SafetensorsFile;
import fs.tensor.BlockScales;
import fs.tensor.DType;
import fs.tensor.FormatSources;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every variant of libfscpu this CPU runs (an AVX-512 machine runs the avx2 and scalar code too), every format,
 * against {@link Int8Reference}: the quantized activations byte for byte, every output float bit for bit (so every
 * integer lane sum exactly: one off would change the float), and the outputs against the exact products of
 * llama.cpp's weights (the q-tied files' samples) within the bound int8 activations allow.
 */
class NativeKernelsTest {
    /** The formats with native kernels: every quantized one. */
    static final List<DType> FORMATS = FormatSources.quantized();
    private static final SymbolLookup LIBRARY = NativeLibrary.load(NativeLibrary.bundled());

    static List<String> variants() {
        return NativeKernels.runnable(LIBRARY);
    }

    static Stream<Arguments> variantsAndFormats() {
        return variants().stream().flatMap(isa -> FORMATS.stream().map(type -> Arguments.of(isa, type)));
    }

    @Test
    void theBuildHasTheLibraryWhoseBestVariantThisCpuRuns() {
        List<String> runnable = variants();
        assertTrue(runnable.contains("scalar"), "every CPU runs the scalar variant: " + runnable);
        assertEquals(runnable.getFirst(), NativeKernels.best(LIBRARY), "fs_cpu_isa names the best of " + runnable);
        if (NativeLibrary.platform().equals("linux-x86_64")) {
            Set<String> flags = cpuFlags("flags");
            assertTrue(runnable.contains("avx2") || !flags.contains("avx2"), "runs " + runnable);
            assertEquals(flags.containsAll(List.of("avx512f", "avx512bw", "avx512vl", "avx512_vnni")),
                    runnable.contains("avx512"), "avx512 by /proc/cpuinfo's flags: runs " + runnable);
            assertEquals(flags.containsAll(List.of("avx2", "avx_vnni")), runnable.contains("avxvnni"),
                    "avxvnni by /proc/cpuinfo's flags: runs " + runnable);
        }
        if (NativeLibrary.platform().equals("linux-aarch64")) {
            assertEquals(cpuFlags("Features").contains("asimddp"), runnable.contains("neon"),
                    "neon by /proc/cpuinfo's features (asimddp: the dot product): runs " + runnable);
        }
    }

    /** The words of /proc/cpuinfo's first line that starts with {@code field} (x86: flags, aarch64: Features). */
    private static Set<String> cpuFlags(String field) {
        try {
            return java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/cpuinfo")).stream()
                    .filter(line -> line.startsWith(field)).findFirst()
                    .map(line -> Set.of(line.substring(line.indexOf(':') + 1).trim().split("\\s+"))).orElseThrow();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Rows of blocks of every kind: Gaussian values at scales from 2^-30 (f16 scales underflow to subnormals) to
     * 2^20, a zero block, a block of exact halves (ties, which round to even), a single spike.
     */
    private static float[] activations(SplittableRandom random, int k) {
        float[] x = new float[k];
        for (int block = 0; block < k / 32; block++) {
            int from = 32 * block;
            switch (block % 5) {
                case 0 -> { } // zeros
                case 1 -> { // amax 127: id = 1, so x·id = x, and ±(n + 0.5) are ties
                    for (int j = 0; j < 32; j++) x[from + j] = (j % 2 == 0 ? 1 : -1) * (random.nextInt(126) + 0.5f);
                    x[from + random.nextInt(32)] = 127f;
                }
                case 2 -> x[from + random.nextInt(32)] = (float) random.nextGaussian();
                default -> {
                    double scale = Math.scalb(1.0, random.nextInt(-30, 21));
                    for (int j = 0; j < 32; j++) x[from + j] = (float) (scale * random.nextGaussian());
                }
            }
        }
        return x;
    }

    @ParameterizedTest
    @MethodSource("variants")
    void activationsQuantizeAsTheReferenceByteForByte(String isa) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        SplittableRandom random = new SplittableRandom(7);
        for (Activations format : Activations.values()) {
            for (int trial = 0; trial < 50; trial++) {
                float[] x = activations(random, 256 * (1 + random.nextInt(6)));
                byte[] expected = Int8Reference.quantize(format, x);
                byte[] actual = new byte[expected.length];
                kernels.quantize(format, MemorySegment.ofArray(x), MemorySegment.ofArray(actual), x.length);
                assertArrayEquals(expected, actual, isa + " " + format + " trial " + trial);
            }
        }
    }

    /** Random bytes in every field, f16 scales normal halves of either sign (as QuantRowFormatsTest's blocks). */
    static MemorySegment randomRows(SplittableRandom random, DType type, int rows, int k, Arena arena) {
        long rowBytes = type.rowBytes(k);
        MemorySegment w = arena.allocate(rows * rowBytes);
        for (long i = 0; i < w.byteSize(); i++) w.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt(256));
        long[] halves = BlockScales.halfOffsets(type);
        for (long block = 0; block < rows * rowBytes / type.blockBytes(); block++) {
            for (long field : halves) {
                float scale = (float) ((random.nextBoolean() ? 1 : -1) * Math.exp(random.nextDouble(-8, 3)));
                w.set(ValueLayout.JAVA_SHORT_UNALIGNED, block * type.blockBytes() + field, Float.floatToFloat16(scale));
            }
        }
        return w;
    }

    /**
     * A slice of weight rows against 1 to 11 activation rows (the kernels tile them by four), at an output stride
     * wider than the matrix: every output the reference's float, and nothing outside the slice written.
     */
    @ParameterizedTest
    @MethodSource("variantsAndFormats")
    void everyOutputIsTheReferencesFloatBitForBit(String isa, DType type) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        Activations format = Activations.of(type);
        SplittableRandom random = new SplittableRandom(type.ordinal());
        try (Arena arena = Arena.ofConfined()) {
            for (int trial = 0; trial < 40; trial++) {
                int k = 256 * (1 + random.nextInt(8)), n = 1 + random.nextInt(40), rows = 1 + random.nextInt(11);
                MemorySegment w = randomRows(random, type, n, k, arena);
                float[] x = new float[rows * k];
                for (int i = 0; i < x.length; i++) x[i] = (float) random.nextGaussian();
                byte[] act = Int8Reference.quantize(format, x);
                int from = random.nextInt(n), to = from + random.nextInt(n - from + 1);
                long stride = n + 3;
                float[] out = new float[(int) (rows * stride)];
                java.util.Arrays.fill(out, Float.NaN);
                kernels.matmul(type, w, type.rowBytes(k), from, to, MemorySegment.ofArray(act), rows, k,
                        MemorySegment.ofArray(out), stride);
                for (int r = 0; r < rows; r++) {
                    for (int i = 0; i < stride; i++) {
                        float actual = out[(int) (r * stride + i)];
                        String where = isa + " " + type + " trial " + trial + " row " + i + " input " + r;
                        if (i < from || i >= to) {
                            assertTrue(Float.isNaN(actual), where + " is outside the slice but was written");
                            continue;
                        }
                        float expected =
                                Int8Reference.dot(type, w, i * type.rowBytes(k), act, r * format.rowBytes(k), k);
                        assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(actual),
                                where + ": expected " + expected + ", got " + actual);
                    }
                }
            }
        }
    }

    /** The reference's integers are llama.cpp's weights: its decoding reproduces ReferenceDequantizer's floats. */
    @Test
    void theReferencesIntegersAreTheReferenceDequantizersWeights() {
        SplittableRandom random = new SplittableRandom(3);
        try (Arena arena = Arena.ofConfined()) {
            for (DType type : FORMATS) {
                MemorySegment w = randomRows(random, type, 20, 1024, arena);
                float[] expected = new float[20 * 1024];
                ReferenceDequantizer.decode(type, w, expected);
                for (int b = 0; b < expected.length / type.blockElements(); b++) {
                    Int8Reference.Block block = Int8Reference.decode(type, w, (long) b * type.blockBytes());
                    for (int j = 0; j < type.blockElements(); j++) {
                        float e = expected[b * type.blockElements() + j];
                        assertEquals(Float.floatToRawIntBits(e), Float.floatToRawIntBits(block.weight(j)),
                                type + " block " + b + " weight " + j);
                    }
                }
            }
        }
    }

    /**
     * On every tensor of the q-tied files in these formats, each row's native dot with the file's sample input is
     * within B of the exact product (llama.cpp's float64 matvec of the exact weights, stored with the sample), where
     * B bounds what the int8 activations change: each activation is moved by at most half its step d_j, which its
     * group's multiple keeps within amax/127 of its block, so B = Σ_j |w_j|·d_j/2, plus the float32 rounding of the
     * sums, 2^-20·Σ|w_j·x_j|.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void onTheQTiedFilesEveryRowIsTheExactProductToTheActivationsRounding(String isa) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        Set<DType> seen = EnumSet.noneOf(DType.class);
        for (String file : QTied.quantizedFiles()) {
            try (GgufFile gguf = GgufFile.open(QTied.gguf(file));
                    SafetensorsFile samples = SafetensorsFile.open(QTied.samples(file))) {
                for (GgufTensor tensor : gguf.tensors()) {
                    if (!FORMATS.contains(tensor.type())) continue;
                    seen.add(tensor.type());
                    QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                    checkAgainstExactProduct(kernels, tensor, sample, isa + " " + file + " " + tensor);
                }
            }
        }
        assertEquals(Set.copyOf(FORMATS), seen, "the files hold every format");
    }

    private static void checkAgainstExactProduct(NativeKernels kernels, GgufTensor tensor, QTied.Sample sample,
            String what) {
        DType type = tensor.type();
        Activations format = Activations.of(type);
        int k = (int) tensor.columns(), n = (int) tensor.rows();
        float[] x = sample.x();
        byte[] act = Int8Reference.quantize(format, x);
        float[] out = new float[n];
        kernels.matmul(type, tensor.data(), tensor.rowBytes(), 0, n, MemorySegment.ofArray(act), 1, k,
                MemorySegment.ofArray(out), n);
        float[] step = new float[k];
        for (int j = 0; j < k; j++) {
            int from = j / format.elements * format.elements;
            float amax = 0f;
            for (int i = from; i < from + format.elements; i++) amax = Math.max(amax, Math.abs(x[i]));
            step[j] = amax / 127f;
        }
        float[] row = new float[k];
        for (int r = 0; r < n; r++) {
            ReferenceDequantizer.decode(type, tensor.row(r), row);
            double bound = 0, magnitude = 0;
            for (int j = 0; j < k; j++) {
                bound += Math.abs(row[j]) * step[j] / 2;
                magnitude += Math.abs((double) row[j] * x[j]);
            }
            bound = bound * (1 + 0x1p-20) + 0x1p-20 * magnitude;
            double exact = sample.matvec()[r];
            if (!(Math.abs(out[r] - exact) <= bound)) {
                throw new AssertionError(what + " row " + r + ": " + out[r] + ", exact " + exact + ", off by "
                        + Math.abs(out[r] - exact) + " > " + bound);
            }
        }
    }

    /**
     * Each output is the exact product of its quantized operands up to the float32 roundings of the scales' products
     * and the sums: with nb blocks, within (nb + 6)·2^-23·Σ_j (|d·scale·q_j| + |dmin·min_j|)·|a_j| of it.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void everyOutputIsTheExactProductOfTheQuantizedOperandsToFloatRounding(String isa) {
        NativeKernels kernels = NativeKernels.bind(LIBRARY, isa);
        SplittableRandom random = new SplittableRandom(11);
        List<String> checked = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            for (DType type : FORMATS) {
                Activations format = Activations.of(type);
                int k = 2048, n = 16;
                MemorySegment w = randomRows(random, type, n, k, arena);
                float[] x = activations(random, k);
                byte[] act = Int8Reference.quantize(format, x);
                float[] out = new float[n];
                kernels.matmul(type, w, type.rowBytes(k), 0, n, MemorySegment.ofArray(act), 1, k,
                        MemorySegment.ofArray(out), n);
                int blocks = k / type.blockElements();
                for (int r = 0; r < n; r++) {
                    double exact = 0, magnitude = 0;
                    for (int b = 0; b < blocks; b++) {
                        Int8Reference.Block block = Int8Reference.decode(type, w, r * type.rowBytes(k)
                                + (long) b * type.blockBytes());
                        for (int j = 0; j < type.blockElements(); j++) {
                            double a = Int8Reference.activation(format, act, 0, b * type.blockElements() + j);
                            double scaled = (double) block.d() * block.scale()[j] * block.q()[j];
                            double min = (double) block.dmin() * block.min()[j];
                            exact += (scaled - min) * a;
                            magnitude += (Math.abs(scaled) + Math.abs(min)) * Math.abs(a);
                        }
                    }
                    double bound = (blocks + 6) * 0x1p-23 * magnitude;
                    assertTrue(Math.abs(out[r] - exact) <= bound, isa + " " + type + " row " + r + ": " + out[r]
                            + ", exact " + exact + ", bound " + bound);
                }
                checked.add(type.toString());
            }
        }
        assertEquals(FORMATS.size(), checked.size());
    }
}
