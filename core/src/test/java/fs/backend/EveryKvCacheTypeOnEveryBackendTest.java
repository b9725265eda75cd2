package fs.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import fs.FsException;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.OpenCl;
import fs.backend.opencl.OpenClBackend;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * test-backend-ops for attention over the KV cache: every cache type × every backend × every batch shape, against
 * the float64 attention of the float32 keys and values, within the bound {@link KvCacheRounding} derives from the
 * type's rounding. Each row of a batch must also be, bit for bit, what it is alone: a serving batch never changes an
 * answer. The shapes are a decoding row deep in the cache (several blocks of positions), a prompt's rows after a
 * cached prefix, and rows of three sequences of different depths in one batch.
 */
class EveryKvCacheTypeOnEveryBackendTest {
    private static final int KV_HEADS = 2, GROUP = 3, HEADS = KV_HEADS * GROUP, HEAD_DIM = 64;
    private static final int WIDTH = KV_HEADS * HEAD_DIM;
    private static final List<KvCacheTypes> TYPES = List.of(KvCacheTypes.F32, KvCacheTypes.F16,
            new KvCacheTypes(KvCacheType.BF16, KvCacheType.BF16), new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.Q8_0),
            new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F16));

    private enum Path { VECTOR_API, NATIVE, OPENCL }

    /** A batch: each row's sequence and position; every earlier position of its sequence is in the cache first. */
    private enum Shape {
        DECODING_ROW(new int[] {1100}, new int[] {0}),
        PROMPT_AFTER_PREFIX(range(300, 37), new int[37]),
        ROWS_OF_THREE_SEQUENCES(new int[] {700, 701, 5, 260, 702}, new int[] {0, 0, 1, 2, 0});

        final int[] positions, sequences;

        Shape(int[] positions, int[] sequences) {
            this.positions = positions;
            this.sequences = sequences;
        }

        private static int[] range(int from, int count) {
            int[] positions = new int[count];
            for (int i = 0; i < count; i++) positions[i] = from + i;
            return positions;
        }
    }

    private static Arena arena;
    private static Backend vectorApi, nativeKernels, openCl;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        vectorApi = new VectorBackend(2, CpuKernels.vectorApi());
        nativeKernels = new VectorBackend(2, CpuKernels.nativeKernels(null));
        openCl = new OpenClBackend(switch (OpenCl.select(true, null)) {
            case OpenCl.Selection.Selected s -> s.device();
            case OpenCl.Selection.NotSelected n -> fail("OpenCL tests need a device (CI installs PoCL): " + n.reason());
        });
    }

    @AfterAll
    static void stop() {
        for (Backend backend : new Backend[] {vectorApi, nativeKernels, openCl}) backend.close();
        arena.close();
    }

    private static Backend backend(Path path) {
        return switch (path) {
            case VECTOR_API -> vectorApi;
            case NATIVE -> nativeKernels;
            case OPENCL -> openCl;
        };
    }

    static Stream<Arguments> everyCase() {
        return Arrays.stream(Path.values()).flatMap(path -> TYPES.stream().flatMap(
                types -> Arrays.stream(Shape.values()).map(shape -> Arguments.of(path, types, shape))));
    }

    @Test
    void everyBackendStoresEveryType() {
        for (Path path : Path.values()) {
            assertEquals(EnumSet.allOf(KvCacheType.class), backend(path).kvCacheTypes(), path.toString());
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("everyCase")
    void attentionIsWithinTheTypesRoundingOfTheFloat64OneAndEachRowIsItsOwn(Path path, KvCacheTypes types,
                                                                         Shape shape) {
        Backend backend = backend(path);
        Random random = new Random(31L * types.hashCode() + shape.ordinal());
        int sequences = 3, context = 1200;
        int[] depth = new int[sequences]; // positions of each sequence before the batch
        Arrays.fill(depth, Integer.MAX_VALUE);
        for (int r = 0; r < shape.positions.length; r++) {
            depth[shape.sequences[r]] = Math.min(depth[shape.sequences[r]], shape.positions[r]);
        }
        // Keys and values of every sequence's positions; keys spread the scores over several units.
        float[][] keys = new float[sequences][(context) * WIDTH], values = new float[sequences][context * WIDTH];
        for (int s = 0; s < sequences; s++) {
            for (int i = 0; i < keys[s].length; i++) {
                keys[s][i] = (float) (2.5 * random.nextGaussian());
                values[s][i] = (float) random.nextGaussian();
            }
        }
        int rows = shape.positions.length;
        float[] q = new float[rows * HEADS * HEAD_DIM];
        for (int i = 0; i < q.length; i++) q[i] = (float) random.nextGaussian();
        KvCache cache = backend.allocateKvCache(1, sequences, context, KV_HEADS, HEAD_DIM, types);
        for (int s = 0; s < sequences; s++) {
            if (depth[s] == Integer.MAX_VALUE || depth[s] == 0) continue;
            backend.storeKv(cache, 0, buffer(backend, Arrays.copyOf(keys[s], depth[s] * WIDTH)),
                    buffer(backend, Arrays.copyOf(values[s], depth[s] * WIDTH)), RowPositions.run(s, 0, depth[s]));
        }
        float[] rowKeys = new float[rows * WIDTH], rowValues = new float[rows * WIDTH];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(keys[shape.sequences[r]], shape.positions[r] * WIDTH, rowKeys, r * WIDTH, WIDTH);
            System.arraycopy(values[shape.sequences[r]], shape.positions[r] * WIDTH, rowValues, r * WIDTH, WIDTH);
        }
        RowPositions placed = RowPositions.of(shape.positions, shape.sequences);
        backend.storeKv(cache, 0, buffer(backend, rowKeys), buffer(backend, rowValues), placed);
        float[] batched = attention(backend, cache, q, placed);

        for (int r = 0; r < rows; r++) {
            int s = shape.sequences[r], seen = shape.positions[r] + 1;
            for (int h = 0; h < HEADS; h++) {
                int qAt = (r * HEADS + h) * HEAD_DIM, kAt = h / GROUP * HEAD_DIM;
                double[] expected = KvCacheRounding.attention(q, qAt, keys[s], values[s], WIDTH, kAt, seen, HEAD_DIM);
                double[] bound = KvCacheRounding.bound(types, q, qAt, keys[s], values[s], WIDTH, kAt, seen, HEAD_DIM);
                for (int e = 0; e < HEAD_DIM; e++) {
                    double error = Math.abs(batched[qAt + e] - expected[e]);
                    if (!(error <= bound[e])) {
                        fail(path + " " + types + " " + shape + ": row " + r + " head " + h + " element " + e + ": "
                                + batched[qAt + e] + " vs " + expected[e] + ", error " + error + " > bound "
                                + bound[e]);
                    }
                }
            }
            // The same row alone, over the same cache: the very floats.
            float[] rowQ = Arrays.copyOfRange(q, r * HEADS * HEAD_DIM, (r + 1) * HEADS * HEAD_DIM);
            float[] alone = attention(backend, cache, rowQ,
                    RowPositions.of(new int[] {shape.positions[r]}, new int[] {s}));
            assertArrayEquals(alone, Arrays.copyOfRange(batched, r * HEADS * HEAD_DIM, (r + 1) * HEADS * HEAD_DIM),
                    path + " " + types + " " + shape + ": row " + r + " alone differs from the batch");
        }
    }

    @Test
    void q8_0NeedsHeadsOfWholeBlocksAndSaysSo() {
        for (Path path : Path.values()) {
            FsException e = assertThrows(FsException.class, () -> backend(path).allocateKvCache(1, 1, 8, 1, 16,
                    new KvCacheTypes(KvCacheType.F16, KvCacheType.Q8_0)));
            assertTrue(e.getMessage().contains("q8_0") && e.getMessage().contains("multiple of 32"), e.getMessage());
        }
    }

    private static float[] attention(Backend backend, KvCache cache, float[] q, RowPositions placed) {
        Buffer out = backend.allocate(q.length);
        backend.attention(buffer(backend, q), cache, 0, out, placed, HEADS);
        float[] result = new float[q.length];
        backend.read(out, 0, result);
        return result;
    }

    /** Host floats into a buffer of the backend: no host→buffer op exists, so an f32 table's rows are embedded. */
    private static Buffer buffer(Backend backend, float[] values) {
        MemorySegment table = arena.allocate(Math.max(1, values.length) * 4L, 4);
        MemorySegment.copy(values, 0, table, ValueLayout.JAVA_FLOAT, 0, values.length);
        Weight w = backend.upload(new Tensor("values", DType.F32, new long[] {1, values.length}, table));
        Buffer b = backend.allocate(values.length);
        backend.embed(w, new int[] {0}, b);
        return b;
    }
}
