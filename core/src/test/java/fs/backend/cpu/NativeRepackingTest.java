package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import fs.FsException;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;
import fs.backend.Weight;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CPU backend repacking Q4_K and Q4_0 weights at upload (the default), Q8_0, Q6_K, Q2_K and Q3_K on the avx512
 * and avx2 variants, against the same backend with repacking off: the same floats, bit for bit, from matmuls of
 * any rows and threads, from the expert matmul, and in a model's logits; a file's tensor whose pages repacking
 * released reads back as the file; the description says which formats were repacked; FS_CPU_REPACK / fs.cpu.repack
 * choose, a bad value is one error line (NativeRepackedKernelsTest checks the kernels on every variant).
 */
class NativeRepackingTest {
    /** Weight rows: whole groups of 16 over three units of 64, the last one partial. */
    private static final int N = 160;
    private static final int K = 512;

    private static VectorBackend backend(int threads, boolean repack) {
        return backend(null, threads, repack);
    }

    /** The native kernels of variant isa (null: the best this CPU runs). */
    private static VectorBackend backend(String isa, int threads, boolean repack) {
        CpuKernels kernels = CpuKernels.nativeKernels(isa);
        assertTrue(kernels.nativeKernels() != null, "the native kernels load: " + kernels.unavailable());
        return new VectorBackend(threads, repack ? kernels : kernels.withoutRepacking());
    }

    private static float[] gaussian(SplittableRandom random, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) random.nextGaussian();
        return x;
    }

    private static Buffer buffer(VectorBackend backend, float[] values) {
        Buffer b = backend.allocate(values.length);
        MemorySegment.copy(values, 0, ((CpuBuffer) b).segment(), ValueLayout.JAVA_FLOAT, 0, values.length);
        return b;
    }

    private static float[] read(VectorBackend backend, Buffer b, int length) {
        float[] values = new float[length];
        backend.read(b, 0, values);
        return values;
    }

    private static float[] matmul(VectorBackend backend, Tensor tensor, float[] x, int rows) {
        Weight w = backend.upload(tensor);
        backend.awaitUploads(); // the copy made: the repacked kernels run
        Buffer out = backend.allocate((long) rows * N);
        backend.matmul(buffer(backend, x), w, out, rows);
        return read(backend, out, rows * N);
    }

    /**
     * The variant whose backend repacks {@code type} (null: the best this CPU runs): Q8_0, Q6_K, Q2_K and Q3_K are
     * repacked on avx512 and avx2 alone.
     */
    private static String repackingIsa(DType type) {
        if (type == DType.Q8_0 || type == DType.Q6_K || type == DType.Q2_K || type == DType.Q3_K) {
            String isa = NativeKernelsTest.variants().contains("avx512") ? "avx512" : "avx2";
            assumeTrue(NativeKernelsTest.variants().contains(isa), type + " is repacked on avx512 and avx2 alone");
            return isa;
        }
        return null;
    }

    /** Whether a backend's description says that weights of {@code format} were repacked (among others). */
    private static boolean saysRepacked(String description, String format) {
        return Pattern.compile(" int8 matmul, ([A-Z0-9_]+/)*" + format + "(/[A-Z0-9_]+)* repacked, ").matcher(description)
                .find();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Q4_K", "Q4_0", "Q8_0", "Q6_K", "Q2_K", "Q3_K"})
    void aRepackedWeightsMatmulIsTheStoredWeightsBitForBit(String name) {
        DType type = DType.valueOf(name);
        String isa = repackingIsa(type);
        SplittableRandom random = new SplittableRandom(type.ordinal());
        Tensor tensor = new Tensor("w", type, new long[] {N, K},
                NativeKernelsTest.randomRows(random, type, N, K, Arena.ofAuto()));
        for (int rows : new int[] {1, 3, 4, 9, 21}) {
            float[] x = gaussian(random, rows * K);
            float[] expected;
            try (VectorBackend stored = backend(isa, 1, false)) {
                expected = matmul(stored, tensor, x, rows);
            }
            for (int threads : new int[] {1, 3}) {
                try (VectorBackend repacked = backend(isa, threads, true)) {
                    assertArrayEquals(expected, matmul(repacked, tensor, x, rows),
                            type + ", " + rows + " rows, " + threads + " threads");
                    assertTrue(saysRepacked(repacked.description(), type.name()), repacked.description());
                }
            }
        }
    }

    /** The expert matmul reads repacked experts too: 4 experts, 7 rows choosing 2 each, as NativeMatmulTest's. */
    @Test
    void repackedExpertsGiveTheStoredExpertsFloats() {
        SplittableRandom random = new SplittableRandom(8);
        Tensor[] experts = new Tensor[4];
        for (int e = 0; e < experts.length; e++) {
            experts[e] = new Tensor("expert" + e, DType.Q4_K, new long[] {N, K},
                    NativeKernelsTest.randomRows(random, DType.Q4_K, N, K, Arena.ofAuto()));
        }
        ExpertRouting routing = new ExpertRouting(7, 2, 4, new int[] {0, 1, 0, 1, 1, 3, 0, 1, 0, 3, 1, 3, 0, 1},
                new float[14]);
        float[] x = gaussian(random, routing.rows() * K);
        float[][] results = new float[2][];
        for (int repack = 0; repack < 2; repack++) {
            try (VectorBackend backend = backend(3, repack == 1)) {
                List<Weight> weights = Arrays.stream(experts).map(backend::upload).toList();
                backend.awaitUploads();
                Buffer out = backend.allocate((long) routing.slots() * N);
                backend.matmulExperts(buffer(backend, x), false, weights, routing, out);
                results[repack] = read(backend, out, routing.slots() * N);
                assertEquals(repack == 1, backend.description().contains("Q4_K repacked"), backend.description());
            }
        }
        assertArrayEquals(results[0], results[1]);
    }

    /**
     * On q-tied's Q4_K_M, Q4_0, Q8_0, Q6_K and Q2_K files (the last with Q3_K matrices too): the prompt's logits, in
     * one batch, and two tokens decoded after it, the same to the bit with the file's repacked matrices as with them
     * read in place.
     */
    @ParameterizedTest
    @ValueSource(strings = {"Q4_K_M", "Q4_0", "Q8_0", "Q6_K", "Q2_K"})
    void aModelsLogitsAreTheSameWithRepackingOnAndOff(String type) throws IOException {
        String format = type.substring(0, 4), isa = repackingIsa(DType.valueOf(format));
        int[] prompt = TopLogitsGolden.load(QTied.dir().resolve("golden-" + type + ".json")).tokens();
        float[][][] logits = new float[2][][];
        for (int repack = 0; repack < 2; repack++) {
            try (ModelSource source = ModelSource.open(QTied.gguf(type));
                    VectorBackend backend = backend(isa, 2, repack == 1)) {
                ModelConfig config = source.config();
                SingleSequence model = new SingleSequence(new DecoderModel(config,
                        ModelWeights.bind(config, source.tensors()), backend),
                        new SingleSequence.Shape(64, prompt.length, prompt.length));
                assertEquals(repack == 1, saysRepacked(backend.description(), format), backend.description());
                backend.awaitUploads();
                model.forward(prompt, 0, Probe.NONE);
                logits[repack] = new float[prompt.length + 2][config.vocabSize()];
                for (int r = 0; r < prompt.length; r++) model.readLogits(r, logits[repack][r]);
                for (int step = 0; step < 2; step++) {
                    int next = model.argmax(model.logitRows() - 1);
                    model.forward(new int[] {next}, prompt.length + step, Probe.NONE);
                    model.readLogits(0, logits[repack][prompt.length + step]);
                }
            }
        }
        for (int r = 0; r < logits[0].length; r++) assertArrayEquals(logits[0][r], logits[1][r], type + " row " + r);
    }

    /**
     * A repacked tensor of a file's mapping, whose pages repacking released, still reads as the file's bytes where
     * the Vector API reads it in place (here: its rows as an embedding table).
     */
    @ParameterizedTest
    @ValueSource(strings = {"Q4_K_M", "Q8_0"})
    void aRepackedTensorsReleasedFilePagesReadBackAsTheFile(String file) {
        DType type = DType.valueOf(file.substring(0, 4));
        String isa = repackingIsa(type);
        try (GgufFile gguf = GgufFile.open(QTied.gguf(file));
                VectorBackend repacked = backend(isa, 1, true); VectorBackend stored = backend(isa, 1, false)) {
            GgufTensor t = gguf.tensors().stream().filter(g -> g.type() == type).findFirst().orElseThrow();
            assertTrue(t.data().isMapped(), "a file's tensor");
            Tensor tensor = new Tensor(t.name(), t.type(), new long[] {t.rows(), t.columns()}, t.data());
            Weight a = repacked.upload(tensor), b = stored.upload(tensor);
            repacked.awaitUploads(); // copied, and its file pages released
            assertTrue(repacked.description().contains(type + " repacked"), repacked.description());
            int[] tokens = {0, 7, (int) t.rows() - 1};
            int width = (int) t.columns();
            Buffer x = repacked.allocate((long) tokens.length * width), y = stored.allocate((long) tokens.length * width);
            repacked.embed(a, tokens, x);
            stored.embed(b, tokens, y);
            assertArrayEquals(read(stored, y, tokens.length * width), read(repacked, x, tokens.length * width));
        }
    }

    /**
     * Q8_0, Q6_K, Q2_K and Q3_K are repacked at upload by avx512 and avx2 and by no other variant, Q4_0 by all.
     */
    @Test
    void q80Q6KQ2KAndQ3KAreRepackedOnAvx512AndAvx2AndQ40Everywhere() {
        SplittableRandom random = new SplittableRandom(5);
        List<Tensor> tensors = List.of(DType.Q8_0, DType.Q6_K, DType.Q2_K, DType.Q3_K, DType.Q4_0).stream()
                .map(type -> new Tensor(type.name(), type, new long[] {N, K},
                        NativeKernelsTest.randomRows(random, type, N, K, Arena.ofAuto())))
                .toList();
        for (String isa : NativeKernelsTest.variants()) {
            try (VectorBackend backend = backend(isa, 1, true)) {
                tensors.forEach(backend::upload);
                String description = backend.description();
                assertEquals(isa.equals("avx512") || isa.equals("avx2"), saysRepacked(description, "Q8_0"), description);
                assertEquals(isa.equals("avx512") || isa.equals("avx2"), saysRepacked(description, "Q6_K"), description);
                assertEquals(isa.equals("avx512") || isa.equals("avx2"), saysRepacked(description, "Q2_K"), description);
                assertEquals(isa.equals("avx512") || isa.equals("avx2"), saysRepacked(description, "Q3_K"), description);
                assertTrue(saysRepacked(description, "Q4_0"), description);
            }
        }
    }

    @Test
    void theSettingsChooseRepackingAndAPropertyWinsOverTheEnvironment() {
        assertTrue(CpuKernels.fromSettings(name -> null, name -> null).repacks(), "on by default");
        Map<String, String> off = Map.of("FS_CPU_REPACK", "off");
        CpuKernels fromEnvironment = CpuKernels.fromSettings(name -> null, off::get);
        assertFalse(fromEnvironment.repacks());
        assertTrue(fromEnvironment.nativeKernels() != null, "native kernels, repacking off");
        assertTrue(CpuKernels.fromSettings(Map.of("fs.cpu.repack", "on")::get, off::get).repacks());
        assertFalse(CpuKernels.fromSettings(Map.of("fs.cpu.repack", "off")::get, name -> null).repacks());
        try (VectorBackend backend = new VectorBackend(1, fromEnvironment)) {
            Tensor tensor = new Tensor("w", DType.Q4_K, new long[] {N, K},
                    NativeKernelsTest.randomRows(new SplittableRandom(3), DType.Q4_K, N, K, Arena.ofAuto()));
            backend.upload(tensor);
            assertFalse(backend.description().contains("repacked"), backend.description());
        }
    }

    /**
     * The copies are made on the repacker's thread: an upload returns before its copy is ready, awaitUploads waits
     * for every one, and a matmul before then reads the file's rows (the same floats: the tests above).
     */
    @Test
    void awaitUploadsWaitsForEveryCopy() {
        SplittableRandom random = new SplittableRandom(11);
        try (VectorBackend backend = backend(2, true)) {
            List<CpuWeight> weights = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                weights.add((CpuWeight) backend.upload(new Tensor("w" + i, DType.Q4_K, new long[] {N, K},
                        NativeKernelsTest.randomRows(random, DType.Q4_K, N, K, Arena.ofAuto()))));
            }
            backend.awaitUploads();
            for (CpuWeight w : weights) assertTrue(w.repacked().ready(), w.name());
        }
    }

    /** Closing the backend while its copies are being made stops them and returns; nothing is written after. */
    @Test
    void closingWhileCopyingStopsTheCopies() {
        SplittableRandom random = new SplittableRandom(13);
        MemorySegment rows = NativeKernelsTest.randomRows(random, DType.Q4_K, 4096, K, Arena.ofAuto());
        for (int round = 0; round < 5; round++) {
            VectorBackend backend = backend(2, true);
            for (int i = 0; i < 16; i++) backend.upload(new Tensor("w" + i, DType.Q4_K, new long[] {4096, K}, rows));
            backend.close();
            assertThrows(IllegalStateException.class, backend::awaitUploads);
        }
    }

    @Test
    void aBadRepackValueIsOneErrorLine() {
        FsException property = assertThrows(FsException.class,
                () -> CpuKernels.fromSettings(Map.of("fs.cpu.repack", "yes")::get, name -> null));
        assertEquals("fs.cpu.repack=yes is unknown; choose on or off", property.getMessage());
        FsException variable = assertThrows(FsException.class,
                () -> CpuKernels.fromSettings(name -> null, Map.of("FS_CPU_REPACK", "0")::get));
        assertEquals("FS_CPU_REPACK=0 is unknown; choose on or off", variable.getMessage());
    }
}
