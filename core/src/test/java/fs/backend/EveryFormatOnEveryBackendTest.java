package fs.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import fs.FsException;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.NativeMatmulCheck;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.OpenCl;
import fs.backend.opencl.OpenClBackend;
import fs.format.RowQuantizers;
import fs.tensor.DType;
import fs.tensor.FormatSources;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * llama.cpp's test-backend-ops for the one op every weight format goes through, the matmul: each backend × each
 * format it reads, against the scalar oracle on the reference decoding of the same blocks. The formats come from the
 * descriptors ({@link FormatSources}), and {@link #eachBackendReadsExactlyTheFormatsTheLoopGivesIt} holds every
 * backend to them, so a format a backend reads cannot be left out of its loop.
 *
 * <p>The backends: the Vector API path; the native kernels (where the build has no libfscpu, that backend is the
 * Vector API again and its description says why); OpenCL on its device (a GPU, else PoCL, which CI installs).
 */
class EveryFormatOnEveryBackendTest {
    /** test-backend-ops' bound for a matmul: the normalized mean squared error against the reference. */
    private static final double NMSE = 5e-4;

    private enum Path {
        VECTOR_API, NATIVE, OPENCL;

        /** The formats this path's loop takes. */
        List<DType> formats() {
            return FormatSources.weights();
        }

        /** Whether the path reads {@code type}, as the backend answers it. */
        boolean reads(DType type) {
            return this == NATIVE ? NativeMatmulCheck.covers(type) : backend(this).supports(type);
        }
    }

    private static Arena arena;
    private static Backend oracle;
    private static Backend vectorApi, nativeKernels, openCl;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        oracle = new ScalarBackend();
        vectorApi = new VectorBackend(2, CpuKernels.vectorApi());
        nativeKernels = new VectorBackend(2, CpuKernels.nativeKernels(null));
        openCl = new OpenClBackend(switch (OpenCl.select(true, null)) {
            case OpenCl.Selection.Selected s -> s.device();
            case OpenCl.Selection.NotSelected n -> fail("OpenCL tests need a device (CI installs PoCL): " + n.reason());
        });
    }

    @AfterAll
    static void stop() {
        for (Backend backend : new Backend[] {oracle, vectorApi, nativeKernels, openCl}) backend.close();
        arena.close();
    }

    private static Backend backend(Path path) {
        return switch (path) {
            case VECTOR_API -> vectorApi;
            case NATIVE -> nativeKernels;
            case OPENCL -> openCl;
        };
    }

    static Stream<Arguments> pathsAndFormats() {
        return Arrays.stream(Path.values()).flatMap(path -> path.formats().stream().map(t -> Arguments.of(path, t)));
    }

    @Test
    void eachBackendReadsExactlyTheFormatsTheLoopGivesIt() {
        for (DType type : DType.values()) {
            for (Path path : Path.values()) {
                assertEquals(path.formats().contains(type), path.reads(type), path + " " + type);
            }
            boolean weight = FormatSources.weights().contains(type);
            assertEquals(weight, oracle.supports(type), "the scalar oracle, " + type);
            assertEquals(weight, writes(type), "the quantizers, " + type);
        }
    }

    private static boolean writes(DType type) {
        try {
            RowQuantizers.of(type);
            return true;
        } catch (FsException e) {
            return false;
        }
    }

    /** A decode step (one row) and a small prefill, over N = 37 rows of weights fs's quantizer wrote. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("pathsAndFormats")
    void theMatmulIsTheOraclesWithinTestBackendOpsBound(Path path, DType type) {
        Random random = new Random(type.ordinal());
        int n = 37, k = type.isQuantized() ? 512 : 83;
        Tensor w = quantized(type, n, k, random);
        Backend backend = backend(path);
        for (int rows : new int[] {1, 5}) {
            float[] x = new float[rows * k];
            for (int i = 0; i < x.length; i++) x[i] = (float) random.nextGaussian();
            float[] expected = matmul(oracle, x, w, rows);
            float[] actual = matmul(backend, x, w, rows);
            double nmse = nmse(actual, expected);
            assertTrue(nmse <= NMSE, backend.description() + ", " + type + ", " + rows + " rows: NMSE " + nmse);
        }
    }

    /**
     * ggml's mul_mat_id on every path and format: 4 experts of N = 37 rows; 5 rows choosing 2 each, so that experts
     * are shared by several rows, held by one, and left unchosen; then one row (decode). The slots' outputs, computed
     * grouped by expert, must be the oracle's slot-by-slot definition; so must the down projection's form (an input
     * row per slot) and the weighted sum of the slots.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("pathsAndFormats")
    void theExpertMatmulIsTheOraclesWithinTestBackendOpsBound(Path path, DType type) {
        Random random = new Random(100 + type.ordinal());
        int n = 37, k = type.isQuantized() ? 512 : 83;
        List<Tensor> experts = new java.util.ArrayList<>();
        for (int e = 0; e < 4; e++) experts.add(quantized(type, n, k, random));
        Backend backend = backend(path);
        ExpertRouting[] routings = {
            new ExpertRouting(5, 2, 4, new int[] {0, 2, 0, 2, 1, 2, 0, 1, 0, 2},
                    new float[] {0.7f, 0.3f, 0.5f, 0.5f, 0.9f, 0.1f, 0.25f, 0.75f, 0.6f, 0.4f}),
            new ExpertRouting(1, 2, 4, new int[] {1, 3}, new float[] {0.375f, 0.625f})};
        for (ExpertRouting routing : routings) {
            for (boolean perSlot : new boolean[] {false, true}) {
                int inputRows = perSlot ? routing.slots() : routing.rows();
                float[] x = new float[inputRows * k];
                for (int i = 0; i < x.length; i++) x[i] = (float) random.nextGaussian();
                float[] expected = expertMatmul(oracle, x, experts, routing, perSlot);
                float[] actual = expertMatmul(backend, x, experts, routing, perSlot);
                double nmse = nmse(actual, expected);
                assertTrue(nmse <= NMSE, backend.description() + ", " + type + ", " + routing.rows() + " rows, "
                        + (perSlot ? "an input per slot" : "an input per row") + ": NMSE " + nmse);
            }
        }
    }

    /** The weighted sum of each row's slots, on every backend, against the oracle's sum in double. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(Path.class)
    void theExpertSumIsTheOracles(Path path) {
        Random random = new Random(7);
        int width = 83;
        ExpertRouting routing = new ExpertRouting(3, 3, 5, new int[] {0, 1, 4, 1, 2, 3, 0, 3, 4},
                new float[] {0.5f, 0.25f, 0.25f, 0.2f, 0.3f, 0.5f, 0.125f, 0.375f, 0.5f});
        float[] slots = new float[routing.slots() * width];
        for (int i = 0; i < slots.length; i++) slots[i] = (float) random.nextGaussian();
        float[] expected = expertSum(oracle, slots, routing, width);
        float[] actual = expertSum(backend(path), slots, routing, width);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], actual[i], 1e-6 * (1 + Math.abs(expected[i])), path + " element " + i);
        }
    }

    /**
     * The transfers a model split across backends hands its hidden state by: a row written from host memory (an
     * array's, off-heap, the backend's page-locked staging where it has one) into the middle of a buffer, and read back
     * into the same memory, is the row, its neighbours as they were, as the float[] read sees them too.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(Path.class)
    void aRowWrittenAndReadThroughHostMemoryIsTheRow(Path path) {
        Backend backend = backend(path);
        Random random = new Random(11);
        int width = 83;
        long bytes = 4L * width;
        float[] rows = new float[3 * width], row = new float[width];
        for (int i = 0; i < rows.length; i++) rows[i] = (float) random.nextGaussian();
        for (int i = 0; i < row.length; i++) row[i] = (float) random.nextGaussian();
        float[] expected = rows.clone();
        System.arraycopy(row, 0, expected, width, width);
        // only a device has pinned staging; it is fetched after the buffer's upload, the last transfer before its use
        assertEquals(path == Path.OPENCL, backend.pinnedStaging(bytes).isPresent(), path + " has pinned staging");
        Map<String, Supplier<MemorySegment>> hostMemories = new LinkedHashMap<>();
        hostMemories.put("an array's", () -> MemorySegment.ofArray(new float[width]));
        hostMemories.put("off-heap", () -> arena.allocate(bytes, 4));
        backend.pinnedStaging(bytes).ifPresent(staging -> hostMemories.put("pinned staging",
                () -> backend.pinnedStaging(bytes).orElseThrow().asSlice(0, bytes)));
        for (Map.Entry<String, Supplier<MemorySegment>> hostMemory : hostMemories.entrySet()) {
            String kind = hostMemory.getKey();
            Buffer buffer = input(backend, rows, 3, width);
            MemorySegment host = hostMemory.getValue().get();
            MemorySegment.copy(row, 0, host, ValueLayout.JAVA_FLOAT, 0, width);
            backend.write(host, buffer, width);
            host.fill((byte) 0);
            backend.read(buffer, width, host);
            assertArrayEquals(row, host.toArray(ValueLayout.JAVA_FLOAT), path + ", " + kind + ": the row read back");
            backend.read(buffer, 2L * width, host);
            assertArrayEquals(Arrays.copyOfRange(rows, 2 * width, 3 * width), host.toArray(ValueLayout.JAVA_FLOAT),
                    path + ", " + kind + ": the next row");
            float[] all = new float[3 * width];
            backend.read(buffer, 0, all);
            assertArrayEquals(expected, all, path + ", " + kind + ": the buffer as float[] reads it");
        }
    }

    private static float[] expertMatmul(Backend backend, float[] x, List<Tensor> experts, ExpertRouting routing,
            boolean perSlot) {
        int k = (int) experts.getFirst().dim(1);
        Buffer in = input(backend, x, x.length / k, k);
        Buffer out = backend.allocate((long) routing.slots() * experts.getFirst().dim(0));
        backend.matmulExperts(in, perSlot, experts.stream().map(backend::upload).toList(), routing, out);
        float[] result = new float[(int) out.length()];
        backend.read(out, 0, result);
        return result;
    }

    private static float[] expertSum(Backend backend, float[] slots, ExpertRouting routing, int width) {
        Buffer in = input(backend, slots, routing.slots(), width);
        Buffer out = backend.allocate((long) routing.rows() * width);
        backend.sumExperts(in, routing, out, width);
        float[] result = new float[(int) out.length()];
        backend.read(out, 0, result);
        return result;
    }

    /** {@code rows} × {@code k} floats in a buffer of the backend, through the embedding of an F32 table holding them. */
    private static Buffer input(Backend backend, float[] x, int rows, int k) {
        MemorySegment table = arena.allocate(4L * x.length, 4);
        MemorySegment.copy(x, 0, table, ValueLayout.JAVA_FLOAT, 0, x.length);
        Weight inputs = backend.upload(new Tensor("x", DType.F32, new long[] {rows, k}, table));
        Buffer in = backend.allocate((long) rows * k);
        int[] tokens = new int[rows];
        Arrays.setAll(tokens, r -> r);
        backend.embed(inputs, tokens, in);
        return in;
    }

    /** Gaussian weights written as {@code type} by its quantizer (with a flat importance: IQ2_XXS needs one). */
    private static Tensor quantized(DType type, int n, int k, Random random) {
        float[] values = new float[n * k];
        for (int i = 0; i < values.length; i++) values[i] = (float) random.nextGaussian();
        float[] importance = new float[k];
        Arrays.fill(importance, 1f);
        MemorySegment data = arena.allocate(n * type.rowBytes(k), 16);
        RowQuantizers.of(type).quantize(values, n, k, importance, data, 0);
        return new Tensor("w", type, new long[] {n, k}, data);
    }

    private static float[] matmul(Backend backend, float[] x, Tensor w, int rows) {
        // No host-to-buffer op exists: the input is the embedding of the rows of an F32 table holding it.
        MemorySegment table = arena.allocate(4L * x.length, 4);
        MemorySegment.copy(x, 0, table, ValueLayout.JAVA_FLOAT, 0, x.length);
        int k = (int) w.dim(1);
        Weight inputs = backend.upload(new Tensor("x", DType.F32, new long[] {rows, k}, table));
        Buffer in = backend.allocate((long) rows * k);
        int[] tokens = new int[rows];
        Arrays.setAll(tokens, r -> r);
        backend.embed(inputs, tokens, in);
        Buffer out = backend.allocate((long) rows * w.dim(0));
        backend.matmul(in, backend.upload(w), out, rows);
        float[] result = new float[(int) out.length()];
        backend.read(out, 0, result);
        return result;
    }

    private static double nmse(float[] actual, float[] expected) {
        double error = 0, reference = 0;
        for (int i = 0; i < expected.length; i++) {
            error += (actual[i] - (double) expected[i]) * (actual[i] - (double) expected[i]);
            reference += (double) expected[i] * expected[i];
        }
        return error / reference;
    }
}
