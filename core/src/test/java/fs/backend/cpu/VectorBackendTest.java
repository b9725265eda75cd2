package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.ScalarBackend;
import fs.backend.Weight;
import fs.format.ReferenceDequantizer;
import fs.model.RopeScaling;
import fs.tensor.BlockScales;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Every op of {@link VectorBackend} against the {@link ScalarBackend} oracle, plus its reproducibility promises. */
class VectorBackendTest {
    /**
     * Float32 sums against the oracle's double sums: a K = 1025 dot product, in 16 lanes or in one chain, is off by a
     * few ulps of its terms, an NMSE near 1e-14; 1e-10 still catches any wrong term.
     */
    private static final double NMSE = 1e-10;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static Arena arena;
    private static VectorBackend one;
    private static VectorBackend two;
    private static ScalarBackend oracle;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        one = new VectorBackend(1);
        two = new VectorBackend(2);
        oracle = new ScalarBackend();
    }

    @AfterAll
    static void stop() {
        one.close();
        two.close();
        arena.close();
    }

    /**
     * A tensor of random values exactly representable in its dtype (for block formats: random quants under scales
     * near 2^-6), off-heap as a mapped checkpoint would be.
     */
    static Tensor randomTensor(String name, DType dtype, Random random, long... shape) {
        long count = 1;
        for (long d : shape) count *= d;
        long bytes = count / shape[shape.length - 1] * dtype.rowBytes(shape[shape.length - 1]);
        // Two bytes off alignment: a checkpoint does not promise aligned tensors.
        MemorySegment data = arena.allocate(bytes + 2, 8).asSlice(2, bytes);
        if (dtype == DType.Q8_0 || dtype == DType.Q4_0) {
            for (long b = 0; b < bytes; b += dtype.blockBytes()) {
                data.set(SHORT, b, Float.floatToFloat16((float) ((0.5 + random.nextDouble()) / 64)));
                for (int i = 2; i < dtype.blockBytes(); i++) data.set(ValueLayout.JAVA_BYTE, b + i, (byte) random.nextInt());
            }
            return new Tensor(name, dtype, shape, data);
        }
        if (dtype.isQuantized()) {
            // Random quants and scale bytes under f16 super-block scales near 2^-8.
            long[] halves = BlockScales.halfOffsets(dtype);
            for (long b = 0; b < bytes; b += dtype.blockBytes()) {
                for (int i = 0; i < dtype.blockBytes(); i++) data.set(ValueLayout.JAVA_BYTE, b + i, (byte) random.nextInt());
                for (long at : halves) {
                    data.set(SHORT, b + at, Float.floatToFloat16((float) ((0.5 + random.nextDouble()) / 256)));
                }
            }
            return new Tensor(name, dtype, shape, data);
        }
        for (long i = 0; i < count; i++) {
            float v = (float) random.nextGaussian();
            switch (dtype) {
                case F32 -> data.set(FLOAT, 4 * i, v);
                case BF16 -> data.set(SHORT, 2 * i, (short) (Float.floatToRawIntBits(v) >>> 16));
                case F16 -> data.set(SHORT, 2 * i, Float.floatToFloat16(v));
                default -> throw new IllegalArgumentException(dtype.toString());
            }
        }
        return new Tensor(name, dtype, shape, data);
    }

    static float[] randomFloats(Random random, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) random.nextGaussian();
        return a;
    }

    /** A buffer of the backend holding {@code values}. */
    static Buffer buffer(Backend backend, float[] values) {
        Buffer b = backend.allocate(values.length);
        Buffer staging = backend.allocate(values.length);
        // No host→buffer op exists: embed rows of an f32 table holding the values.
        MemorySegment table = arena.allocate(Math.max(1, values.length) * 4L, 4);
        MemorySegment.copy(values, 0, table, FLOAT, 0, values.length);
        Weight w = backend.upload(new Tensor("values", DType.F32, new long[] {1, values.length}, table));
        backend.embed(w, new int[] {0}, staging);
        backend.copy(staging, 0, b, 0, values.length);
        return b;
    }

    static float[] read(Backend backend, Buffer b) {
        float[] out = new float[(int) b.length()];
        backend.read(b, 0, out);
        return out;
    }

    static double nmse(float[] actual, float[] expected) {
        double err = 0, ref = 0;
        for (int i = 0; i < expected.length; i++) {
            double d = (double) actual[i] - expected[i];
            err += d * d;
            ref += (double) expected[i] * expected[i];
        }
        return ref == 0 ? err : err / ref;
    }

    static void assertClose(float[] actual, float[] expected, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        double e = nmse(actual, expected);
        assertTrue(e <= NMSE, what + ": NMSE " + e);
    }

    private static float[] matmul(Backend backend, float[] x, Tensor w, int rows) {
        Weight weight = backend.upload(w);
        Buffer out = backend.allocate(rows * w.dim(0));
        backend.matmul(buffer(backend, x), weight, out, rows);
        return read(backend, out);
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#floats")
    void matmulMatchesTheOracle(DType dtype) {
        Random random = new Random(1);
        for (int k : new int[] {1, 7, 33, 100, 1025}) {
            for (int n : new int[] {1, 3, 65}) {
                Tensor w = randomTensor("w", dtype, random, n, k);
                for (int rows : new int[] {1, 3, 17}) {
                    float[] x = randomFloats(random, rows * k);
                    float[] expected = matmul(oracle, x, w, rows);
                    String what = dtype + " K=" + k + " N=" + n + " rows=" + rows;
                    assertClose(matmul(one, x, w, rows), expected, what + " 1 thread");
                    assertClose(matmul(two, x, w, rows), expected, what + " 2 threads");
                }
            }
        }
    }

    /** Row j of the weight as llama.cpp's reference dequantization gives it. */
    private static float[] weightRow(Tensor w, long j) {
        float[] row = new float[(int) w.columns()];
        long rowBytes = w.dtype().rowBytes(w.columns());
        ReferenceDequantizer.decode(w.dtype(), w.data().asSlice(j * rowBytes, rowBytes), row);
        return row;
    }

    /** Every output as the plain sequential chain {@code s = fma(w[i], x[i], s)} over i = 0, 1, …, K − 1. */
    private static float[] sequentialFmaChains(float[] x, Tensor w, int rows) {
        int n = (int) w.dim(0), k = (int) w.dim(1);
        float[] out = new float[rows * n];
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < n; j++) {
                float[] row = weightRow(w, j);
                float s = 0f;
                for (int i = 0; i < k; i++) s = Math.fma(row[i], x[r * k + i], s);
                out[r * n + j] = s;
            }
        }
        return out;
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#floats")
    void aBatchComputesEachOutputAsTheSequentialFmaChainOnAnyThreadCount(DType dtype) {
        Random random = new Random(2);
        // N = 133: two full units and a partial panel; 17 rows and the fewest past the few-rows path: full tiles and
        // a tile that overhangs the batch.
        for (int k : new int[] {1025 + 64, 64, 7}) {
            int n = 133;
            Tensor w = randomTensor("w", dtype, random, n, k);
            int fewest = MatmulTask.FEW_ROWS + 1;
            for (int rows : new int[] {17, fewest}) {
                float[] x = randomFloats(random, rows * k);
                float[] expected = sequentialFmaChains(x, w, rows);
                String what = dtype + " K=" + k + " rows=" + rows;
                assertArrayEquals(expected, matmul(two, x, w, rows), what + ", 2 threads");
                assertArrayEquals(expected, matmul(one, x, w, rows), what + ", 1 thread");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void aQuantizedMatmulMatchesTheOracle(DType dtype) {
        Random random = new Random(21);
        int block = dtype.blockElements();
        try (VectorBackend three = new VectorBackend(3)) {
            // K = one block, three, and past 1024; N = 133: two full units, a partial panel, and rows past the last
            // four-row tile.
            for (int k : new int[] {block, 3 * block, 1024 + 2 * block}) {
                for (int n : new int[] {1, 3, 65, 133}) {
                    Tensor w = randomTensor("w", dtype, random, n, k);
                    for (int rows : new int[] {1, 3, 17}) {
                        float[] x = randomFloats(random, rows * k);
                        float[] expected = matmul(oracle, x, w, rows);
                        String what = dtype + " K=" + k + " N=" + n + " rows=" + rows;
                        float[] alone = matmul(one, x, w, rows);
                        assertClose(alone, expected, what + " 1 thread");
                        assertArrayEquals(alone, matmul(two, x, w, rows), what + ": 2 threads vs 1");
                        assertArrayEquals(alone, matmul(three, x, w, rows), what + ": 3 threads vs 1");
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void aQuantizedBatchIsTheSequentialFmaChainOfTheDequantizedWeights(DType dtype) {
        Random random = new Random(22);
        int block = dtype.blockElements();
        for (int k : new int[] {1024 + 2 * block, 2 * block}) {
            Tensor w = randomTensor("w", dtype, random, 133, k);
            for (int rows : new int[] {17, MatmulTask.FEW_ROWS + 1}) {
                float[] x = randomFloats(random, rows * k);
                float[] expected = sequentialFmaChains(x, w, rows);
                assertArrayEquals(expected, matmul(two, x, w, rows), dtype + " K=" + k + " rows=" + rows + ", 2 threads");
                assertArrayEquals(expected, matmul(one, x, w, rows), dtype + " K=" + k + " rows=" + rows + ", 1 thread");
            }
        }
    }

    /**
     * 2..FEW_ROWS rows (a scheduler's decode step): a tiled format's output for each row is the one that row gets
     * alone; any other format's is the lane dot of the exactly dequantized weight row (L lanes of FMAs summed in the
     * fixed tree, then the tail as a chain), written out here in scalar code. Every row count (tiles of eight, four,
     * two and one input rows), an odd weight row count (the last pair is one row), K with and without a tail past the
     * vector part, and a unit split between threads.
     */
    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#weights")
    void aFewRowsShareEachDecodedWeightRowAndKeepTheirOneRowArithmetic(DType dtype) {
        Random random = new Random(23);
        boolean tiled = RowFormats.of(dtype).orElseThrow() instanceof TiledRows;
        int block = dtype.blockElements();
        int[] ks = block == 1 ? new int[] {1024 + 64, 64, 1025 + 24, 7}
                : block == 32 ? new int[] {1024 + 64, 64, 32} : new int[] {1024 + block, block};
        for (int k : ks) {
            int n = 133;
            Tensor w = randomTensor("w", dtype, random, n, k);
            for (int rows = 2; rows <= MatmulTask.FEW_ROWS; rows++) {
                float[] x = randomFloats(random, rows * k);
                float[] expected = new float[rows * n];
                for (int r = 0; r < rows; r++) {
                    float[] xr = java.util.Arrays.copyOfRange(x, r * k, (r + 1) * k);
                    float[] alone = tiled ? matmul(one, xr, w, 1) : null;
                    for (int j = 0; j < n; j++) expected[r * n + j] = tiled ? alone[j] : laneDot(weightRow(w, j), xr);
                }
                String what = dtype + " K=" + k + " rows=" + rows;
                assertArrayEquals(expected, matmul(two, x, w, rows), what + ", 2 threads");
                assertArrayEquals(expected, matmul(one, x, w, rows), what + ", 1 thread");
            }
        }
    }

    /** {@link MatmulKernels#laneDot} in scalar code: lane i sums the products at i, i + L, …, the lanes in its tree. */
    private static float laneDot(float[] w, float[] x) {
        int lanesCount = MatmulKernels.L, full = w.length - w.length % lanesCount;
        float[] lanes = new float[lanesCount];
        for (int c = 0; c < full; c += lanesCount) {
            for (int i = 0; i < lanesCount; i++) lanes[i] = Math.fma(w[c + i], x[c + i], lanes[i]);
        }
        for (int half = lanesCount / 2; half >= 1; half /= 2) {
            for (int i = 0; i < half; i++) lanes[i] += lanes[i + half];
        }
        float s = lanes[0];
        for (int j = full; j < w.length; j++) s = Math.fma(w[j], x[j], s);
        return s;
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#quantized")
    void aQuantizedTableEmbedsAndNormalizesAsTheReferenceDequantizes(DType dtype) {
        int k = Math.max(64, dtype.blockElements());
        Tensor table = randomTensor("embed", dtype, new Random(23), 5, k);
        Buffer out = one.allocate(2 * k);
        one.embed(one.upload(table), new int[] {3, 0}, out);
        float[] expected = new float[2 * k];
        System.arraycopy(weightRow(table, 3), 0, expected, 0, k);
        System.arraycopy(weightRow(table, 0), 0, expected, k, k);
        assertArrayEquals(expected, read(one, out));
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#floats")
    void oneRowIsTheSameOnAnyThreadCountAndAgreesWithTheBatch(DType dtype) {
        Random random = new Random(4);
        int k = 1025 + 64, n = 133, rows = 5;
        Tensor w = randomTensor("w", dtype, random, n, k);
        float[] x = randomFloats(random, rows * k);
        float[] batched = matmul(two, x, w, rows);
        for (int r = 0; r < rows; r++) {
            float[] row = java.util.Arrays.copyOfRange(x, r * k, (r + 1) * k);
            float[] alone = matmul(two, row, w, 1);
            assertArrayEquals(alone, matmul(one, row, w, 1), "row " + r + ": 1 thread vs 2 threads");
            // One row sums in 16 lanes and a tree, a batch in one chain: the same sums, rounded differently.
            assertClose(alone, java.util.Arrays.copyOfRange(batched, r * n, (r + 1) * n), dtype + " row " + r);
        }
    }

    @Test
    void matmulStaysBitwiseTheSameOnceCompiled() {
        // The first call runs mostly interpreted, the last compiled: both must compute the same floats.
        Random random = new Random(3);
        int k = 96, n = 36, rows = 5;
        Tensor w = randomTensor("w", DType.BF16, random, n, k);
        Tensor w32 = randomTensor("w32", DType.F32, random, n, k);
        float[] x = randomFloats(random, rows * k);
        float[] first = matmul(two, x, w, rows);
        float[] first32 = matmul(two, x, w32, rows);
        Weight weight = two.upload(w), weight32 = two.upload(w32);
        Buffer in = buffer(two, x), out = two.allocate((long) rows * n);
        for (int i = 0; i < 3000; i++) {
            two.matmul(in, weight, out, rows);
            two.matmul(in, weight32, out, 1);
        }
        assertArrayEquals(first, matmul(two, x, w, rows));
        assertArrayEquals(first32, matmul(two, x, w32, rows));
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#floats")
    void rmsNormMatchesTheOracle(DType dtype) {
        Random random = new Random(4);
        for (int width : new int[] {1, 7, 128, 1025}) {
            Tensor gamma = randomTensor("gamma", dtype, random, width);
            for (int rows : new int[] {1, 3, 17}) {
                float[] x = randomFloats(random, rows * width);
                float[] expected = rmsNorm(oracle, x, gamma, rows);
                assertClose(rmsNorm(one, x, gamma, rows), expected, dtype + " width " + width + " rows " + rows);
                assertArrayEquals(rmsNorm(one, x, gamma, rows), rmsNorm(two, x, gamma, rows));
            }
        }
    }

    private static float[] rmsNorm(Backend backend, float[] x, Tensor gamma, int rows) {
        Buffer b = buffer(backend, x);
        backend.rmsNorm(b, backend.upload(gamma), b, rows, 1e-6f); // in place: out may be x
        return read(backend, b);
    }

    @Test
    void ropeMatchesTheFloat64Reference() {
        Random random = new Random(5);
        for (int headDim : new int[] {6, 64, 128}) {
            // Plain RoPE, and YaRN's blended frequencies with cos and sin scaled by its attention factor.
            for (Rope rope : new Rope[] {Rope.plain(headDim, 1_000_000), yarn(headDim)}) {
                for (int startPos : new int[] {0, 7, 30000}) {
                    int rows = 3, heads = 5;
                    float[] x = randomFloats(random, rows * heads * headDim);
                    float[] expected = rope(oracle, x, rows, heads, startPos, rope);
                    float[] actual = rope(one, x, rows, heads, startPos, rope);
                    String where = rope + " startPos " + startPos;
                    for (int i = 0; i < x.length; i++) {
                        assertEquals(expected[i], actual[i], 1e-5 * Math.max(1, Math.abs(expected[i])),
                                where + " element " + i);
                    }
                    assertClose(actual, expected, "rope");
                    assertArrayEquals(actual, rope(two, x, rows, heads, startPos, rope));
                }
            }
        }
    }

    /** Qwen3's documented YaRN (factor 4 over 32768 positions): its ramp covers some pairs of every head size here. */
    private static Rope yarn(int headDim) {
        return new RopeScaling.Yarn(4, 32768, 32, 1, 1 + 0.1 * Math.log(4), true).rope(headDim, 1_000_000);
    }

    private static float[] rope(Backend backend, float[] x, int rows, int heads, int startPos, Rope rope) {
        Buffer b = buffer(backend, x);
        backend.rope(b, RowPositions.run(0, startPos, rows), heads, rope);
        return read(backend, b);
    }

    @Test
    void ropeOfABatchEqualsEachRowAtItsPosition() {
        Random random = new Random(6);
        int rows = 4, heads = 2, headDim = 64;
        Rope rope = yarn(headDim);
        float[] x = randomFloats(random, rows * heads * headDim);
        float[] batched = rope(one, x, rows, heads, 10, rope);
        for (int r = 0; r < rows; r++) {
            int w = heads * headDim;
            float[] alone = rope(two, java.util.Arrays.copyOfRange(x, r * w, (r + 1) * w), 1, heads, 10 + r, rope);
            assertArrayEquals(java.util.Arrays.copyOfRange(batched, r * w, (r + 1) * w), alone);
        }
    }

    @Test
    void attentionMatchesTheOracle() {
        Random random = new Random(7);
        for (int headDim : new int[] {24, 128}) {
            for (int group : new int[] {1, 2, 4}) {
                // Past 4L positions scores also come four key blocks at a time.
                for (int startPos : new int[] {0, 5, 40, 70}) {
                    for (int rows : new int[] {1, 3, 17}) {
                        int kvHeads = 2, heads = kvHeads * group;
                        int total = startPos + rows;
                        float[] keys = randomFloats(random, total * kvHeads * headDim);
                        float[] values = randomFloats(random, total * kvHeads * headDim);
                        float[] q = randomFloats(random, rows * heads * headDim);
                        float[] expected = attention(oracle, keys, values, q, rows, startPos, heads, kvHeads, headDim);
                        float[] actual = attention(one, keys, values, q, rows, startPos, heads, kvHeads, headDim);
                        assertClose(actual, expected,
                                "headDim " + headDim + " group " + group + " startPos " + startPos + " rows " + rows);
                        assertArrayEquals(actual,
                                attention(two, keys, values, q, rows, startPos, heads, kvHeads, headDim));
                    }
                }
            }
        }
    }

    /** Stores the first startPos positions in one call and the rows' own positions in a second, then attends. */
    private static float[] attention(Backend backend, float[] keys, float[] values, float[] q, int rows, int startPos,
                                     int heads, int kvHeads, int headDim) {
        int layer = 1, width = kvHeads * headDim;
        KvCache cache = backend.allocateKvCache(2, 1, startPos + rows + 3, kvHeads, headDim);
        Buffer k = buffer(backend, keys), v = buffer(backend, values);
        if (startPos > 0) backend.storeKv(cache, layer, k, v, RowPositions.run(0, 0, startPos));
        Buffer kRows = backend.allocate((long) rows * width), vRows = backend.allocate((long) rows * width);
        backend.copy(k, (long) startPos * width, kRows, 0, (long) rows * width);
        backend.copy(v, (long) startPos * width, vRows, 0, (long) rows * width);
        RowPositions placed = RowPositions.run(0, startPos, rows);
        backend.storeKv(cache, layer, kRows, vRows, placed);
        Buffer out = backend.allocate(q.length);
        backend.attention(buffer(backend, q), cache, layer, out, placed, heads);
        return read(backend, out);
    }

    @Test
    void ropeTurnsEachRowByItsOwnPosition() {
        Random random = new Random(16);
        int heads = 2, headDim = 64, w = heads * headDim;
        Rope rope = yarn(headDim);
        int[] positions = {7, 0, 300, 7, 41};
        float[] x = randomFloats(random, positions.length * w);
        RowPositions placed = RowPositions.of(positions, new int[] {1, 0, 2, 0, 1});
        for (Backend backend : new Backend[] {one, two}) {
            Buffer b = buffer(backend, x);
            backend.rope(b, placed, heads, rope);
            float[] batched = read(backend, b);
            for (int r = 0; r < positions.length; r++) {
                float[] alone = rope(one, java.util.Arrays.copyOfRange(x, r * w, (r + 1) * w), 1, heads, positions[r], rope);
                assertArrayEquals(alone, java.util.Arrays.copyOfRange(batched, r * w, (r + 1) * w), "row " + r);
            }
        }
    }

    @Test
    void attentionOfSeveralSequencesInOneBatchEqualsEachSequenceAlone() {
        // Three sequences of different lengths share a cache; one batch holds runs of each, in an order that splits
        // sequence 0 in two runs, at positions that are not consecutive. Each row must see only its own sequence.
        assertSequencesApart(one);
        assertSequencesApart(two);
    }

    private void assertSequencesApart(Backend backend) {
        Random random = new Random(17);
        int kvHeads = 2, group = 2, heads = kvHeads * group, headDim = 64, width = kvHeads * headDim;
        int context = 90;
        int[] lengths = {70, 5, 33};
        float[][] keys = new float[3][], values = new float[3][];
        KvCache cache = backend.allocateKvCache(1, 3, context, kvHeads, headDim);
        for (int s = 0; s < 3; s++) {
            keys[s] = randomFloats(random, lengths[s] * width);
            values[s] = randomFloats(random, lengths[s] * width);
            backend.storeKv(cache, 0, buffer(backend, keys[s]), buffer(backend, values[s]),
                    RowPositions.run(s, 0, lengths[s]));
        }
        int[] sequences = {0, 0, 2, 1, 0, 0, 0};
        int[] positions = {69, 12, 32, 4, 0, 50, 51};
        int rows = sequences.length, w = heads * headDim;
        float[] q = randomFloats(random, rows * w);
        Buffer out = backend.allocate(q.length);
        RowPositions placed = RowPositions.of(positions, sequences);
        backend.attention(buffer(backend, q), cache, 0, out, placed, heads);
        float[] batched = read(backend, out);
        for (int r = 0; r < rows; r++) {
            int s = sequences[r], p = positions[r];
            float[] qRow = java.util.Arrays.copyOfRange(q, r * w, (r + 1) * w);
            float[] alone = attention(backend, java.util.Arrays.copyOf(keys[s], (p + 1) * width),
                    java.util.Arrays.copyOf(values[s], (p + 1) * width), qRow, 1, p, heads, kvHeads, headDim);
            assertArrayEquals(alone, java.util.Arrays.copyOfRange(batched, r * w, (r + 1) * w), "row " + r);
            float[] expected = attention(oracle, java.util.Arrays.copyOf(keys[s], (p + 1) * width),
                    java.util.Arrays.copyOf(values[s], (p + 1) * width), qRow, 1, p, heads, kvHeads, headDim);
            assertClose(alone, expected, "row " + r + " against the oracle");
        }
    }

    @Test
    void attentionOfABatchEqualsEachRowAlone() {
        // Tiles of six queries mix rows and heads, and a row's queries share tiles with rows that see fewer or more
        // positions; 13 rows of group 4 fill two spans of tiles; head dims of whole tiles (64) and with a remainder
        // (84); past 4L positions and short of them.
        Random random = new Random(8);
        for (int headDim : new int[] {64, 84}) {
            for (int group : new int[] {2, 4}) {
                for (int startPos : new int[] {3, 60}) {
                    int rows = 13, kvHeads = 2, heads = kvHeads * group, total = startPos + rows;
                    float[] keys = randomFloats(random, total * kvHeads * headDim);
                    float[] values = randomFloats(random, total * kvHeads * headDim);
                    float[] q = randomFloats(random, rows * heads * headDim);
                    float[] batched = attention(two, keys, values, q, rows, startPos, heads, kvHeads, headDim);
                    int w = heads * headDim;
                    for (int r = 0; r < rows; r++) {
                        float[] alone = attention(one, keys, values, java.util.Arrays.copyOfRange(q, r * w, (r + 1) * w),
                                1, startPos + r, heads, kvHeads, headDim);
                        assertArrayEquals(java.util.Arrays.copyOfRange(batched, r * w, (r + 1) * w), alone,
                                "headDim " + headDim + " group " + group + " startPos " + startPos + " row " + r);
                    }
                }
            }
        }
    }

    @Test
    void siluMulMatchesTheOracle() {
        Random random = new Random(9);
        for (int n : new int[] {1, 17, 100_003}) {
            float[] gate = randomFloats(random, n), up = randomFloats(random, n);
            float[] expected = siluMul(oracle, gate, up);
            float[] actual = siluMul(one, gate, up);
            assertClose(actual, expected, "siluMul " + n);
            assertArrayEquals(actual, siluMul(two, gate, up));
        }
    }

    private static float[] siluMul(Backend backend, float[] gate, float[] up) {
        Buffer g = buffer(backend, gate);
        backend.siluMul(g, buffer(backend, up), g, gate.length); // out aliases gate
        return read(backend, g);
    }

    @Test
    void addCopyAndReadAreExact() {
        Random random = new Random(10);
        for (int n : new int[] {1, 33, 1000}) {
            float[] x = randomFloats(random, n), y = randomFloats(random, n);
            float[] expected = new float[n];
            for (int i = 0; i < n; i++) expected[i] = x[i] + y[i];
            Buffer bx = buffer(one, x);
            one.add(bx, buffer(one, y), n);
            assertArrayEquals(expected, read(one, bx));

            Buffer dst = one.allocate(n + 5);
            one.copy(bx, 1, dst, 3, n - 1);
            float[] got = new float[n - 1];
            one.read(dst, 3, got);
            assertArrayEquals(java.util.Arrays.copyOfRange(expected, 1, n), got);
            float[] zeros = new float[3];
            one.read(dst, 0, zeros);
            assertArrayEquals(new float[3], zeros, "allocate zero-fills");
        }
    }

    @ParameterizedTest
    @MethodSource("fs.tensor.FormatSources#floats")
    void embedMatchesTheOracle(DType dtype) {
        Random random = new Random(11);
        Tensor table = randomTensor("embed", dtype, random, 50, 37);
        int[] tokens = {3, 49, 0, 3};
        Buffer expected = oracle.allocate(tokens.length * 37), actual = one.allocate(tokens.length * 37);
        oracle.embed(oracle.upload(table), tokens, expected);
        one.embed(one.upload(table), tokens, actual);
        assertArrayEquals(read(oracle, expected), read(one, actual));
    }

    @Test
    void embedRejectsATokenOutsideTheTable() {
        Tensor table = randomTensor("embed", DType.BF16, new Random(12), 10, 4);
        Weight w = one.upload(table);
        Buffer out = one.allocate(4);
        FsException e = assertThrows(FsException.class, () -> one.embed(w, new int[] {10}, out));
        assertTrue(e.getMessage().contains("10"), e.getMessage());
    }

    @Test
    void uploadRefusesAFormatItDoesNotReadByName() {
        Tensor ints = new Tensor("ids", DType.I32, new long[] {4}, arena.allocate(16, 4));
        FsException e = assertThrows(FsException.class, () -> one.upload(ints));
        assertTrue(e.getMessage().contains("ids") && e.getMessage().contains("I32"), e.getMessage());
        Tensor doubles = new Tensor("w", DType.F64, new long[] {2, 2}, arena.allocate(32, 8));
        e = assertThrows(FsException.class, () -> one.upload(doubles));
        assertTrue(e.getMessage().contains("F64"), e.getMessage());
        assertFalse(one.supports(DType.F64));
        assertTrue(one.supports(DType.Q8_0) && one.supports(DType.Q4_0) && one.supports(DType.BF16));
    }

    /** The weight binder checks a checkpoint against the formats fs reads; the CPU backend must read all of them. */
    @ParameterizedTest
    @EnumSource(DType.class)
    void readsExactlyTheFormatsFsReads(DType type) {
        assertEquals(ReferenceDequantizer.decodes(type), one.supports(type));
    }

    @Test
    void uploadRefusesRowsThatAreNotWholeBlocks() {
        Tensor w = new Tensor("w", DType.Q8_0, new long[] {2, 48}, arena.allocate(2 * 2 * 34, 8));
        FsException e = assertThrows(FsException.class, () -> one.upload(w));
        assertTrue(e.getMessage().contains("w") && e.getMessage().contains("Q8_0"), e.getMessage());
    }

    @Test
    void argmaxReturnsTheFirstOfTiedMaxima() {
        float[] x = {1, 5, -2, 5, 5, 0, 7, 7};
        Buffer b = buffer(one, x);
        assertEquals(1, one.argmax(b, 0, 6));
        assertEquals(0, one.argmax(b, 1, 5), "relative to the offset");
        assertEquals(2, one.argmax(b, 4, 4));
        assertEquals(oracle.argmax(buffer(oracle, x), 0, 8), one.argmax(b, 0, 8));
    }

    @Test
    void descriptionNamesTheThreads() {
        assertTrue(two.description().contains("2 threads"), two.description());
    }

    @Test
    void closeFreesTheMemory() {
        VectorBackend backend = new VectorBackend(2);
        Buffer b = backend.allocate(100);
        KvCache cache = backend.allocateKvCache(1, 1, 4, 1, 8);
        MemorySegment memory = ((CpuBuffer) b).segment();
        MemorySegment keys = ((CpuKvCache) cache).keys()[0];
        backend.close();
        assertFalse(memory.scope().isAlive());
        assertFalse(keys.scope().isAlive());
        assertThrows(IllegalStateException.class, () -> backend.read(b, 0, new float[1]));
        assertThrows(IllegalStateException.class, () -> backend.allocate(1));
    }

    @Test
    void rejectsShapesThatDoNotFit() {
        Weight w = one.upload(randomTensor("w", DType.BF16, new Random(13), 8, 16));
        Buffer x = one.allocate(16), out = one.allocate(8);
        assertThrows(IllegalArgumentException.class, () -> one.matmul(x, w, out, 2), "input of one row, two asked");
        KvCache cache = one.allocateKvCache(1, 2, 4, 2, 8);
        Buffer kv = one.allocate(2 * 16);
        assertThrows(IllegalArgumentException.class, () -> one.storeKv(cache, 0, kv, kv, RowPositions.run(0, 3, 2)),
                "past the context");
        assertThrows(IllegalArgumentException.class, () -> one.storeKv(cache, 0, kv, kv, RowPositions.run(2, 0, 1)),
                "no sequence 2");
        assertThrows(IllegalArgumentException.class, () -> one.storeKv(cache, 1, kv, kv, RowPositions.run(0, 0, 1)),
                "no layer 1");
        Buffer q = one.allocate(3 * 8);
        assertThrows(IllegalArgumentException.class, () -> one.attention(q, cache, 0, q, RowPositions.run(0, 0, 1), 3),
                "3 query heads over 2 kv heads");
        assertThrows(IllegalArgumentException.class, () -> one.copy(x, 10, out, 0, 8), "source overrun");
        assertThrows(IllegalArgumentException.class, () -> one.argmax(x, 0, 0), "no elements");
    }

    @Test
    void rejectsABufferOfAnotherBackend() {
        Buffer foreign = two.allocate(4);
        assertThrows(IllegalArgumentException.class, () -> one.read(foreign, 0, new float[4]));
    }
}
