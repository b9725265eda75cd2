package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;
import fs.backend.Weight;
import fs.backend.cpu.NativeKernels.Activations;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * The CPU backend with native kernels: matmuls of the formats libfscpu has run there, for one row (decode), a few
 * rows (a scheduler's streams) and a batch (prefill), with the same floats whatever the threads and rows; the other
 * formats stay on the Vector API; the settings that choose the kernels; and the fallback when the library is absent.
 */
class NativeMatmulTest {
    /** Weight rows over several units of 64, the last one partial. */
    private static final int N = 150;
    private static final int K = 512;

    /** A [N, K] tensor of random blocks off-heap (NativeKernelsTest's). */
    private static Tensor randomTensor(DType type, SplittableRandom random) {
        MemorySegment data = NativeKernelsTest.randomRows(random, type, N, K, Arena.ofAuto());
        return new Tensor("w", type, new long[] {N, K}, data);
    }

    private static float[] gaussian(SplittableRandom random, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) random.nextGaussian();
        return x;
    }

    private static float[] matmul(VectorBackend backend, Tensor tensor, float[] x, int rows) {
        Weight w = backend.upload(tensor);
        Buffer in = backend.allocate(x.length), out = backend.allocate((long) rows * N);
        MemorySegment.copy(x, 0, ((CpuBuffer) in).segment(), ValueLayout.JAVA_FLOAT, 0, x.length);
        backend.matmul(in, w, out, rows);
        float[] result = new float[rows * N];
        backend.read(out, 0, result);
        return result;
    }

    @ParameterizedTest
    @FieldSource("fs.backend.cpu.NativeKernelsTest#FORMATS")
    void everyRowCountAndThreadCountGivesTheKernelsFloats(DType type) {
        SplittableRandom random = new SplittableRandom(type.ordinal());
        Tensor tensor = randomTensor(type, random);
        for (int rows : new int[] {1, 3, 8, 9, 21}) {
            float[] x = gaussian(random, rows * K);
            byte[] act = Int8Reference.quantize(Activations.of(type), x);
            float[] expected = new float[rows * N];
            for (int r = 0; r < rows; r++) {
                for (int i = 0; i < N; i++) {
                    expected[r * N + i] = Int8Reference.dot(type, tensor.data(), i * type.rowBytes(K), act,
                            r * Activations.of(type).rowBytes(K), K);
                }
            }
            for (int threads : new int[] {1, 3}) {
                try (VectorBackend backend = new VectorBackend(threads, CpuKernels.nativeKernels(null))) {
                    assertArrayEquals(expected, matmul(backend, tensor, x, rows), type + ", " + rows + " rows, "
                            + threads + " threads");
                }
            }
        }
    }

    /**
     * The expert matmul (all of a call's experts in one hand-off, each input row quantized once) gives every slot the
     * kernels' floats of its own row and expert, whatever the grouping, the threads and where the input comes from:
     * 4 experts, 7 rows choosing 2 each (experts shared, one held alone, one unchosen) and a single row.
     */
    @ParameterizedTest
    @FieldSource("fs.backend.cpu.NativeKernelsTest#FORMATS")
    void everyExpertSlotGetsTheKernelsFloats(DType type) {
        SplittableRandom random = new SplittableRandom(100 + type.ordinal());
        Tensor[] experts = new Tensor[4];
        for (int e = 0; e < experts.length; e++) experts[e] = randomTensor(type, random);
        ExpertRouting[] routings = {
            new ExpertRouting(7, 2, 4, new int[] {0, 1, 0, 1, 1, 3, 0, 1, 0, 3, 1, 3, 0, 1},
                    new float[14]),
            new ExpertRouting(1, 2, 4, new int[] {1, 2}, new float[2])};
        Activations format = Activations.of(type);
        for (ExpertRouting routing : routings) {
            for (boolean perSlot : new boolean[] {false, true}) {
                int inputRows = perSlot ? routing.slots() : routing.rows();
                float[] x = gaussian(random, inputRows * K);
                byte[] act = Int8Reference.quantize(format, x);
                float[] expected = new float[routing.slots() * N];
                for (int s = 0; s < routing.slots(); s++) {
                    int row = perSlot ? s : s / routing.used();
                    Tensor w = experts[routing.expert(s)];
                    for (int i = 0; i < N; i++) {
                        expected[s * N + i] = Int8Reference.dot(type, w.data(), i * type.rowBytes(K), act,
                                row * format.rowBytes(K), K);
                    }
                }
                for (int threads : new int[] {1, 3}) {
                    try (VectorBackend backend = new VectorBackend(threads, CpuKernels.nativeKernels(null))) {
                        List<Weight> weights = Arrays.stream(experts).map(backend::upload).toList();
                        Buffer in = backend.allocate(x.length), out = backend.allocate((long) routing.slots() * N);
                        MemorySegment.copy(x, 0, ((CpuBuffer) in).segment(), ValueLayout.JAVA_FLOAT, 0, x.length);
                        backend.matmulExperts(in, perSlot, weights, routing, out);
                        float[] result = new float[routing.slots() * N];
                        backend.read(out, 0, result);
                        assertArrayEquals(expected, result, type + ", " + routing.rows() + " rows, "
                                + (perSlot ? "a row per slot, " : "a row per token, ") + threads + " threads");
                    }
                }
            }
        }
    }

    /** The description says which native matmuls the weights uploaded so far run on: float for BF16, int8 for blocks. */
    @Test
    void theDescriptionNamesTheKernelsThatRunForTheWeights() {
        String best = NativeKernels.best(NativeLibrary.load(NativeLibrary.bundled()));
        SplittableRandom random = new SplittableRandom(7);
        try (VectorBackend backend = new VectorBackend(2, CpuKernels.nativeKernels(null));
                VectorBackend scalar = new VectorBackend(1, CpuKernels.nativeKernels("scalar"))) {
            assertTrue(backend.description().startsWith("cpu (native " + best + " matmul, Vector API "),
                    backend.description());
            assertTrue(backend.description().endsWith(", 2 threads)"), backend.description());
            backend.upload(new Tensor("w", DType.BF16, new long[] {N, K}, Arena.ofAuto().allocate(2L * N * K)));
            assertTrue(backend.description().startsWith("cpu (native " + best + " float matmul, Vector API "),
                    backend.description());
            backend.upload(randomTensor(DType.Q8_0, random));
            assertTrue(backend.description().startsWith("cpu (native " + best + " int8 and float matmul, "),
                    backend.description());
            scalar.upload(randomTensor(DType.Q4_0, random));
            assertTrue(scalar.description().startsWith("cpu (native scalar int8 matmul"), scalar.description());
        }
    }

    @Test
    void withoutTheLibraryTheVectorApiRunsAndTheDescriptionSaysWhy(@TempDir Path dir) {
        Path missing = dir.resolve("libfscpu.so");
        CpuKernels kernels = CpuKernels.nativeKernels(null, missing);
        assertNull(kernels.nativeKernels());
        SplittableRandom random = new SplittableRandom(9);
        Tensor tensor = randomTensor(DType.Q4_K, random);
        float[] x = gaussian(random, 2 * K);
        try (VectorBackend fallback = new VectorBackend(2, kernels);
                VectorBackend vectorApi = new VectorBackend(2, CpuKernels.vectorApi())) {
            assertTrue(fallback.description().startsWith("cpu (Vector API, 2 threads, "), fallback.description());
            assertTrue(fallback.description().endsWith("; native kernels unavailable: no native CPU kernels at "
                    + missing + ")"), fallback.description());
            assertArrayEquals(matmul(vectorApi, tensor, x, 2), matmul(fallback, tensor, x, 2));
        }
    }

    /** Runs {@code body} with the system properties set, then restores them. */
    private static <T> T withProperties(Map<String, String> properties, java.util.function.Supplier<T> body) {
        Map<String, String> saved = new java.util.HashMap<>();
        properties.forEach((key, value) -> saved.put(key, System.setProperty(key, value)));
        try {
            return body.get();
        } finally {
            saved.forEach((key, value) -> {
                if (value == null) System.clearProperty(key);
                else System.setProperty(key, value);
            });
        }
    }

    /** (The tests' JVMs run with FS_CPU_KERNELS=java, the poms say why; DefaultKernelsTest reads neither.) */
    @Test
    void theEnvironmentChoosesTheKernelsAndAPropertyWinsOverIt() {
        Map<String, String> environment = Map.of("FS_CPU_KERNELS", "java", "FS_CPU_ISA", "scalar");
        assertNull(CpuKernels.fromSettings(name -> null, environment::get).nativeKernels());
        CpuKernels propertyWins = CpuKernels.fromSettings(Map.of("fs.cpu.kernels", "native")::get, environment::get);
        assertEquals("scalar", propertyWins.nativeKernels().isa());
    }

    @Test
    void thePropertiesChooseTheKernels(@TempDir Path dir) {
        CpuKernels java = withProperties(Map.of("fs.cpu.kernels", "java"), CpuKernels::fromEnvironment);
        assertNull(java.nativeKernels());
        assertNull(java.unavailable());
        CpuKernels scalar = withProperties(Map.of("fs.cpu.kernels", "native", "fs.cpu.isa", "scalar"),
                CpuKernels::fromEnvironment);
        assertEquals("scalar", scalar.nativeKernels().isa());
        Path missing = dir.resolve("nothing.so");
        CpuKernels absent = withProperties(Map.of("fs.cpu.kernels", "native", "fs.cpu.library", missing.toString()),
                CpuKernels::fromEnvironment);
        assertNull(absent.nativeKernels());
        assertEquals("native kernels unavailable: no native CPU kernels at " + missing, absent.unavailable());
    }

    @Test
    void anUnknownSettingIsOneErrorNamingTheChoices() {
        FsException kernels = assertThrows(FsException.class,
                () -> withProperties(Map.of("fs.cpu.kernels", "fast"), CpuKernels::fromEnvironment));
        assertEquals("fs.cpu.kernels=fast is unknown; choose native or java", kernels.getMessage());
        FsException isa = assertThrows(FsException.class, () -> withProperties(
                Map.of("fs.cpu.kernels", "native", "fs.cpu.isa", "sse9"), CpuKernels::fromEnvironment));
        assertEquals("fs.cpu.isa=sse9 is unknown; choose one of avx512, avxvnni, avx2, neon, scalar", isa.getMessage());
    }

    /**
     * A known variant this CPU does not run (there is always one: the library has no other architecture's, neon on
     * x86, avx2 on aarch64) is one error naming those it runs, before any of its symbols is looked up.
     */
    @Test
    void aVariantThisCpuDoesNotRunIsOneErrorNamingThoseItRuns() {
        SymbolLookup library = NativeLibrary.load(NativeLibrary.bundled());
        String absent = NativeKernels.ISAS.stream().filter(isa -> !NativeKernels.runs(library, isa))
                .findFirst().orElseThrow();
        FsException e = assertThrows(FsException.class, () -> withProperties(
                Map.of("fs.cpu.kernels", "native", "fs.cpu.isa", absent), CpuKernels::fromEnvironment));
        assertEquals("fs.cpu.isa=" + absent + ": this CPU cannot run the " + absent + " native kernels (it runs "
                + String.join(", ", NativeKernels.runnable(library)) + ")", e.getMessage());
    }

    /** From a jar, the library is copied into the cache, in a folder named by its hash, and loads from there. */
    @Test
    void fromAJarTheLibraryIsExtractedIntoTheCacheAndLoads(@TempDir Path dir) throws IOException {
        Path library = NativeLibrary.bundled();
        String entry = "native/" + NativeLibrary.platform() + "/" + library.getFileName();
        Path jar = dir.resolve("fs-core.jar");
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
            out.putNextEntry(new JarEntry(entry));
            out.write(Files.readAllBytes(library));
            out.closeEntry();
        }
        URL url = URI.create("jar:" + jar.toUri() + "!/" + entry).toURL();
        Path cache = dir.resolve("cache");
        Path extracted = NativeLibrary.extract(url, cache);
        assertEquals(cache, extracted.getParent().getParent());
        assertEquals(library.getFileName(), extracted.getFileName());
        assertArrayEquals(Files.readAllBytes(library), Files.readAllBytes(extracted));
        assertEquals(extracted, NativeLibrary.extract(url, cache), "a second JVM finds the same file");
        try (var files = Files.list(extracted.getParent())) {
            assertEquals(1, files.count(), "no temporary file is left behind");
        }
        assertTrue(NativeKernels.runnable(NativeLibrary.load(extracted)).contains("scalar"));
    }
}
