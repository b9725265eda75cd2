package fs.backend.opencl;

import static fs.backend.opencl.OpenClTestSupport.random;
import static fs.backend.opencl.OpenClTestSupport.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.ExpertRouting;
import fs.backend.ScalarBackend;
import fs.backend.Weight;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;
import fs.format.RowQuantizers;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The mixture-of-experts ops of both kernel designs (forced on whatever device there is, PoCL in CI): the expert
 * matmul against the {@link ScalarBackend} oracle for dense and block-format experts, decode and prefill, x per row and
 * per slot, over routings where rows share experts, choose disjoint ones and leave some unchosen; the expert sum bit
 * for bit as the {@link VectorBackend} sums.
 */
class OpenClExpertOpsTest {
    /** llama.cpp test-backend-ops' bound for float32 ops, as OpenClBackendTest's matmuls. */
    private static final double NMSE = 1e-7;
    private static final int EXPERTS = 6;
    private static final List<DType> EXPERT_DTYPES = List.of(DType.F32, DType.BF16, DType.Q8_0, DType.Q4_K);

    private static Arena arena;
    private static ScalarBackend oracle;
    private static VectorBackend vector;
    private static final Map<KernelDesign, OpenClBackend> backends = new EnumMap<>(KernelDesign.class);
    private final Random random = new Random(7);

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        oracle = new ScalarBackend();
        vector = new VectorBackend(1, CpuKernels.vectorApi());
        for (KernelDesign design : KernelDesign.values()) {
            backends.put(design, new OpenClBackend(OpenClTestSupport.device(), design));
        }
    }

    @AfterAll
    static void stop() {
        backends.values().forEach(OpenClBackend::close);
        backends.clear();
        vector.close();
        oracle.close();
        arena.close();
    }

    /** Rows of (expert, expert, ...) each: the cases the random routings may miss. */
    private static final int[][][] FIXED = {
        {{0, 3}}, // one row: every group one slot, slot 0's in place
        {{1, 4, 5}}, // one row, none at slot 0's expert 0
        {{0, 1}, {2, 3}, {4, 5}}, // disjoint rows: every group one slot
        {{0, 2}, {0, 2}, {0, 2}}, // every row the same experts: groups of consecutive rows
        {{1, 2, 5}, {0, 2, 3}, {2, 3, 4}, {1, 2, 3}, {0, 1, 5}, {3, 4, 5}, {0, 4, 5}}, // overlapping, all chosen
        {{0}, {0}, {3}, {0}, {1}, {1}, {3}}, // one expert per row: groups whose slots are runs of rows
    };

    /** The fixed routings, then random ones of 1, 3 and 7 rows of 2 and 3 experts, each leaving one expert unchosen. */
    private List<ExpertRouting> routings() {
        List<ExpertRouting> routings = new ArrayList<>();
        for (int[][] rows : FIXED) {
            int used = rows[0].length;
            int[] experts = Arrays.stream(rows).flatMapToInt(Arrays::stream).toArray();
            routings.add(new ExpertRouting(rows.length, used, EXPERTS, experts, slotWeights(experts.length)));
        }
        for (int rows : new int[] {1, 3, 7}) {
            for (int used : new int[] {2, 3}) {
                int unchosen = random.nextInt(EXPERTS);
                int[] experts = new int[rows * used];
                for (int r = 0; r < rows; r++) {
                    List<Integer> candidates = new ArrayList<>();
                    for (int e = 0; e < EXPERTS; e++) if (e != unchosen) candidates.add(e);
                    Collections.shuffle(candidates, random);
                    int[] chosen = candidates.subList(0, used).stream().mapToInt(Integer::intValue).sorted().toArray();
                    System.arraycopy(chosen, 0, experts, r * used, used);
                }
                routings.add(new ExpertRouting(rows, used, EXPERTS, experts, slotWeights(experts.length)));
            }
        }
        return routings;
    }

    private float[] slotWeights(int slots) {
        float[] weights = new float[slots];
        for (int s = 0; s < slots; s++) weights[s] = random.nextFloat();
        return weights;
    }

    /** {@code n × k} Gaussian weights as {@code dtype}: block formats written by fs's quantizer. */
    private Tensor expert(DType dtype, int e, int n, int k) {
        if (!dtype.isQuantized()) return tensor("expert" + e, dtype, random(random, n * k), arena, n, k);
        MemorySegment data = arena.allocate(n * dtype.rowBytes(k), 16);
        RowQuantizers.of(dtype).quantize(random(random, n * k), n, k, null, data, 0);
        return new Tensor("expert" + e, dtype, new long[] {n, k}, data);
    }

    /** A buffer holding {@code values}: embed of token 0 from a one-row F32 table is a plain copy on any backend. */
    private static Buffer input(Backend backend, float[] values) {
        Weight staging = backend.upload(tensor("x", DType.F32, values, arena, 1, values.length));
        Buffer buffer = backend.allocate(values.length);
        backend.embed(staging, new int[] {0}, buffer);
        return buffer;
    }

    private static float[] read(Backend backend, Buffer buffer, int length) {
        float[] values = new float[length];
        backend.read(buffer, 0, values);
        return values;
    }

    private static float[] matmulExperts(Backend backend, List<Tensor> experts, float[] x, boolean xPerSlot,
            ExpertRouting routing, int n) {
        List<Weight> weights = experts.stream().map(backend::upload).toList();
        Buffer out = backend.allocate((long) routing.slots() * n);
        backend.matmulExperts(input(backend, x), xPerSlot, weights, routing, out);
        return read(backend, out, routing.slots() * n);
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void matmulExpertsIsTheOraclesForEveryRouting(KernelDesign design) {
        OpenClBackend backend = backends.get(design);
        int n = 45;
        for (DType dtype : EXPERT_DTYPES) {
            int k = dtype.isQuantized() ? 512 : 83;
            List<Tensor> experts = new ArrayList<>();
            for (int e = 0; e < EXPERTS; e++) experts.add(expert(dtype, e, n, k));
            for (ExpertRouting routing : routings()) {
                for (boolean xPerSlot : new boolean[] {false, true}) {
                    float[] x = random(random, (xPerSlot ? routing.slots() : routing.rows()) * k);
                    float[] expected = matmulExperts(oracle, experts, x, xPerSlot, routing, n);
                    float[] actual = matmulExperts(backend, experts, x, xPerSlot, routing, n);
                    // slot by slot, so that one slot wrong among many cannot hide in the mean
                    for (int s = 0; s < routing.slots(); s++) {
                        OpenClTestSupport.assertNmse(Arrays.copyOfRange(expected, s * n, (s + 1) * n),
                                Arrays.copyOfRange(actual, s * n, (s + 1) * n), NMSE,
                                design + " " + dtype + " " + describe(routing) + (xPerSlot ? " x per slot" : "")
                                        + ", slot " + s);
                    }
                }
            }
        }
    }

    private static float[] sumExperts(Backend backend, float[] slots, ExpertRouting routing, int width) {
        Buffer out = backend.allocate((long) routing.rows() * width);
        backend.sumExperts(input(backend, slots), routing, out, width);
        return read(backend, out, routing.rows() * width);
    }

    /**
     * Bit for bit the vector backend's sum (each product rounded, then added in slot order from zero: no fma), and
     * within float32 rounding of the oracle's; widths with and without a vector tail.
     */
    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void sumExpertsIsTheVectorBackendsBitForBit(KernelDesign design) {
        OpenClBackend backend = backends.get(design);
        for (int width : new int[] {64, 83, 1}) {
            for (ExpertRouting routing : routings()) {
                float[] slots = random(random, routing.slots() * width);
                float[] actual = sumExperts(backend, slots, routing, width);
                String what = design + " sum of " + describe(routing) + ", width " + width;
                assertArrayEquals(sumExperts(vector, slots, routing, width), actual, what);
                OpenClTestSupport.assertNmse(sumExperts(oracle, slots, routing, width), actual, NMSE, what);
            }
        }
    }

    /**
     * Many sums enqueued with no blocking call between them (as a forward's layers are): each call's slot weights are
     * written from their own host memory, kept until the queue has run the write, across the host staging filling up
     * (1500 writes of 2 to 21 weights, each at least 64 bytes of it, take about twice its first 64 KiB).
     */
    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void sumsEnqueuedBackToBackKeepTheirOwnWeights(KernelDesign design) {
        OpenClBackend backend = backends.get(design);
        int width = 16, calls = 1500;
        List<ExpertRouting> routings = routings();
        float[] slots = random(random, 7 * 3 * width);
        Buffer in = input(backend, slots);
        List<ExpertRouting> used = new ArrayList<>();
        List<Buffer> outs = new ArrayList<>();
        for (int c = 0; c < calls; c++) {
            ExpertRouting base = routings.get(c % routings.size());
            int[] experts = new int[base.slots()];
            Arrays.setAll(experts, base::expert);
            ExpertRouting routing = new ExpertRouting(base.rows(), base.used(), EXPERTS, experts,
                    slotWeights(base.slots()));
            Buffer out = backend.allocate((long) routing.rows() * width);
            backend.sumExperts(in, routing, out, width);
            used.add(routing);
            outs.add(out);
        }
        for (int c = 0; c < calls; c++) {
            ExpertRouting routing = used.get(c);
            float[] own = Arrays.copyOf(slots, routing.slots() * width);
            float[] actual = read(backend, outs.get(c), routing.rows() * width);
            assertArrayEquals(sumExperts(vector, own, routing, width), actual, design + " call " + c);
        }
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void wrongShapesAndLengthsAreRefused(KernelDesign design) {
        OpenClBackend backend = backends.get(design);
        int n = 8, k = 16;
        List<Weight> experts = new ArrayList<>();
        for (int e = 0; e < EXPERTS; e++) experts.add(backend.upload(expert(DType.F32, e, n, k)));
        ExpertRouting routing = new ExpertRouting(2, 2, EXPERTS, new int[] {0, 1, 1, 4}, slotWeights(4));
        Buffer x = backend.allocate(2L * k), out = backend.allocate(4L * n);
        backend.matmulExperts(x, false, experts, routing, out);
        List<Weight> misshapen = new ArrayList<>(experts);
        misshapen.set(5, backend.upload(expert(DType.F32, 5, n, k + 1)));
        assertThrows(IllegalArgumentException.class, () -> backend.matmulExperts(x, false, misshapen, routing, out));
        assertThrows(IllegalArgumentException.class,
                () -> backend.matmulExperts(x, false, experts.subList(0, 5), routing, out));
        assertThrows(IllegalArgumentException.class, () -> backend.matmulExperts(x, true, experts, routing, out));
        assertThrows(IllegalArgumentException.class,
                () -> backend.matmulExperts(x, false, experts, routing, backend.allocate(4L * n - 1)));
        assertThrows(IllegalArgumentException.class, () -> backend.sumExperts(out, routing, x, n + 1));
        assertThrows(IllegalArgumentException.class, () -> backend.sumExperts(out, routing, backend.allocate(1), n));
    }

    private static String describe(ExpertRouting routing) {
        StringBuilder s = new StringBuilder(routing.rows() + " rows [");
        for (int slot = 0; slot < routing.slots(); slot++) {
            s.append(slot == 0 ? "" : slot % routing.used() == 0 ? " | " : " ").append(routing.expert(slot));
        }
        return s.append("]").toString();
    }
}
