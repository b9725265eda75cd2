package fs.backend.opencl;

import static fs.backend.opencl.OpenClTestSupport.random;
import static fs.backend.opencl.OpenClTestSupport.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.backend.cpu.VectorBackend;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.model.RopeScaling;
import fs.tensor.DType;
import fs.tensor.FormatSources;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every op of both kernel designs (forced on whatever device there is, PoCL in CI) against the same op on the
 * {@link VectorBackend} oracle, on random inputs with odd sizes: ragged tiles, K not a multiple of 8, GQA attention
 * over several hundred cached positions.
 */
class OpenClBackendTest {
    /** llama.cpp test-backend-ops' bound for float32 ops: both sides sum in float32, in different orders. */
    private static final double NMSE = 1e-7;
    private static final List<DType> WEIGHT_DTYPES = FormatSources.floats();

    private static Arena arena;
    private static VectorBackend oracle;
    private static final Map<KernelDesign, OpenClBackend> backends = new EnumMap<>(KernelDesign.class);
    private final Random random = new Random(42);

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        oracle = new VectorBackend(2);
        for (KernelDesign design : KernelDesign.values()) {
            backends.put(design, new OpenClBackend(OpenClTestSupport.device(), design));
        }
    }

    @AfterAll
    static void stop() {
        backends.values().forEach(OpenClBackend::close);
        backends.clear();
        oracle.close();
        arena.close();
    }

    /** Runs {@code op} (which uploads its inputs and returns what it read back) on the oracle and on {@code design}. */
    private static void assertMatchesOracle(KernelDesign design, String what, Function<Backend, float[]> op) {
        float[] expected = op.apply(oracle);
        float[] actual = op.apply(backends.get(design));
        OpenClTestSupport.assertNmse(expected, actual, NMSE, design + " " + what);
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

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void matmulMatchesOracleForEveryDtypeAndShape(KernelDesign design) {
        // rows × N × K: decode and prefill, ragged against every tile and vector width, K from 40 to 1030
        int[][] shapes = {{1, 37, 203}, {1, 64, 256}, {1, 1000, 1030}, {2, 45, 83}, {3, 45, 83}, {5, 67, 129},
            {19, 33, 40}, {37, 130, 517}, {70, 131, 200}, {128, 96, 256}};
        for (DType dtype : WEIGHT_DTYPES) {
            for (int[] shape : shapes) {
                int rows = shape[0], n = shape[1], k = shape[2];
                Tensor w = tensor("w", dtype, random(random, n * k), arena, n, k);
                float[] x = random(random, rows * k);
                assertMatchesOracle(design, "matmul " + dtype + " " + rows + "x" + n + "x" + k, backend -> {
                    Buffer out = backend.allocate((long) rows * n);
                    backend.matmul(input(backend, x), backend.upload(w), out, rows);
                    return read(backend, out, rows * n);
                });
            }
        }
    }

    /**
     * A matrix of each block format, as llama.cpp wrote it in q-tied, uploaded as its blocks: its embedding is the
     * oracle's bit for bit (both decode exactly), and its matmul in decode and in prefill (odd row counts) is the
     * oracle's within float32 rounding.
     */
    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void everyBlockFormatEmbedsAndMultipliesAsTheOracle(KernelDesign design) {
        for (DType type : FormatSources.quantized()) {
            assertTrue(backends.get(design).supports(type), type.name());
            try (GgufFile gguf = GgufFile.open(QTied.gguf(QTied.fileHolding(type)))) {
                GgufTensor stored = gguf.tensors().stream().filter(t -> t.type() == type).findFirst().orElseThrow();
                int n = (int) stored.rows(), k = (int) stored.columns();
                Tensor w = new Tensor(stored.name(), type, new long[] {n, k}, stored.data());
                int[] tokens = {n - 1, 0, n / 2};
                Function<Backend, float[]> embed = backend -> {
                    Buffer x = backend.allocate((long) tokens.length * k);
                    backend.embed(backend.upload(w), tokens, x);
                    return read(backend, x, tokens.length * k);
                };
                assertArrayEquals(embed.apply(oracle), embed.apply(backends.get(design)), design + " embed " + w);
                for (int rows : new int[] {1, 5, 37}) {
                    float[] x = random(random, rows * k);
                    assertMatchesOracle(design, "matmul " + w + " of " + rows + " rows", backend -> {
                        Buffer out = backend.allocate((long) rows * n);
                        backend.matmul(input(backend, x), backend.upload(w), out, rows);
                        return read(backend, out, rows * n);
                    });
                }
            }
        }
    }

    /** rmsNorm reads a norm's weights as floats: a 1-D tensor in a block format is refused at upload, by name. */
    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void aNormInABlockFormatIsRefusedByName(KernelDesign design) {
        Tensor gamma = new Tensor("blk.0.attn_norm.weight", DType.Q8_0, new long[] {32},
                arena.allocate(DType.Q8_0.blockBytes()));
        FsException e = assertThrows(FsException.class, () -> backends.get(design).upload(gamma));
        assertEquals("tensor blk.0.attn_norm.weight is a 1-D weight stored as Q8_0; the OpenCL backend reads 1-D"
                + " weights (norms) in [F32, F16, BF16]", e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void embedAndRmsNormMatchOracle(KernelDesign design) {
        // (rows, width): odd widths, a q/k norm (one row per head of 128) and a hidden-size norm
        int[][] shapes = {{3, 77}, {16, 128}, {2, 1024}};
        int vocab = 11;
        for (DType dtype : WEIGHT_DTYPES) {
            for (int[] shape : shapes) {
                int rows = shape[0], width = shape[1];
                Tensor table = tensor("table", dtype, random(random, vocab * width), arena, vocab, width);
                Tensor gamma = tensor("gamma", dtype, random(random, width), arena, width);
                int[] tokens = new int[rows];
                for (int r = 0; r < rows; r++) tokens[r] = random.nextInt(vocab);
                Function<Backend, float[]> embed = backend -> {
                    Buffer x = backend.allocate((long) rows * width);
                    backend.embed(backend.upload(table), tokens, x);
                    return read(backend, x, rows * width);
                };
                // widening to float32 is exact: both backends hold the very same bits
                assertArrayEquals(embed.apply(oracle), embed.apply(backends.get(design)), design + " embed " + dtype);
                assertMatchesOracle(design, "rmsNorm " + dtype + " " + rows + "x" + width, backend -> {
                    Buffer x = backend.allocate((long) rows * width);
                    backend.embed(backend.upload(table), tokens, x);
                    backend.rmsNorm(x, backend.upload(gamma), x, rows, 1e-6f);
                    return read(backend, x, rows * width);
                });
            }
        }
        OpenClBackend backend = backends.get(design);
        Weight table = backend.upload(tensor("table", DType.F32, random(random, 8), arena, 4, 2));
        FsException e = assertThrows(FsException.class, () -> backend.embed(table, new int[] {4}, backend.allocate(2)));
        assertEquals("token id 4 is outside the vocabulary of table (0..3)", e.getMessage());
    }

    /** The checks are fs.backend.BackendChecks', so a caller's mistake reads the same on either backend. */
    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void rejectsBadArgumentsInTheCpuBackendsWords(KernelDesign design) {
        List<Function<Backend, Exception>> mistakes = List.of(
                b -> assertThrows(FsException.class, () -> b.upload(new Tensor("w", DType.F32, new long[] {2, 3},
                        arena.allocate(20, 4)))),
                b -> assertThrows(IllegalArgumentException.class, () -> b.allocateKvCache(1, 1, 0, 1, 8)),
                b -> {
                    KvCache cache = b.allocateKvCache(1, 2, 20, 2, 8);
                    Buffer kv = b.allocate(21 * 16);
                    return assertThrows(IllegalArgumentException.class,
                            () -> b.storeKv(cache, 0, kv, kv, RowPositions.run(0, 20, 1)));
                },
                b -> {
                    KvCache cache = b.allocateKvCache(1, 2, 20, 2, 8);
                    Buffer kv = b.allocate(21 * 16);
                    return assertThrows(IllegalArgumentException.class,
                            () -> b.attention(kv, cache, 0, kv, RowPositions.run(0, 0, 1), 3));
                },
                b -> {
                    Buffer small = b.allocate(4);
                    return assertThrows(IllegalArgumentException.class, () -> b.add(small, b.allocate(8), 8));
                },
                b -> assertThrows(IllegalArgumentException.class, () -> b.read(b.allocate(4), 2, new float[3])),
                b -> assertThrows(IllegalArgumentException.class,
                        () -> b.write(MemorySegment.ofArray(new float[3]), b.allocate(4), 2)),
                b -> assertThrows(IllegalArgumentException.class,
                        () -> b.read(b.allocate(4), 0, MemorySegment.ofArray(new byte[6]))));
        for (Function<Backend, Exception> mistake : mistakes) {
            assertEquals(mistake.apply(oracle).getMessage(), mistake.apply(backends.get(design)).getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void ropeMatchesOracle(KernelDesign design) {
        // (rows, heads, headDim, startPos)
        int[][] shapes = {{3, 2, 16, 7}, {4, 16, 128, 500}, {1, 8, 128, 4095}};
        for (int[] shape : shapes) {
            int rows = shape[0], heads = shape[1], headDim = shape[2], startPos = shape[3];
            // Plain RoPE, and Qwen3's documented YaRN: blended frequencies, cos and sin times its attention factor.
            Rope yarn = new RopeScaling.Yarn(4, 32768, 32, 1, 1 + 0.1 * Math.log(4), true).rope(headDim, 1_000_000);
            for (Rope rope : new Rope[] {Rope.plain(headDim, 1_000_000), yarn}) {
                float[] x = random(random, rows * heads * headDim);
                String what = "rope " + rows + "x" + heads + "x" + headDim + " at " + startPos + " " + rope;
                assertMatchesOracle(design, what, backend -> {
                    Buffer buffer = input(backend, x);
                    backend.rope(buffer, RowPositions.run(0, startPos, rows), heads, rope);
                    return read(backend, buffer, x.length);
                });
            }
        }
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void storeKvAndAttentionMatchOracle(KernelDesign design) {
        // (heads, kvHeads, headDim, startPos, rows): GQA prefill continuing after hundreds of cached positions, decode
        // steps of Qwen3-0.6B's shape, a first prefill from position 0 and a head_dim that is no multiple of 8
        int[][] shapes = {{6, 2, 24, 300, 5}, {16, 8, 128, 437, 1}, {16, 8, 128, 700, 3}, {4, 4, 64, 0, 9},
            {8, 1, 40, 129, 1}, {4, 2, 20, 33, 2}};
        int context = 720;
        for (int[] shape : shapes) {
            int heads = shape[0], kvHeads = shape[1], headDim = shape[2], startPos = shape[3], rows = shape[4];
            int kvDim = kvHeads * headDim;
            float[] earlierKeys = random(random, startPos * kvDim);
            float[] earlierValues = random(random, startPos * kvDim);
            float[] keys = random(random, rows * kvDim);
            float[] values = random(random, rows * kvDim);
            float[] q = random(random, rows * heads * headDim);
            String what = "attention " + heads + "/" + kvHeads + " heads of " + headDim + ", " + rows + " rows at "
                    + startPos;
            assertMatchesOracle(design, what, backend -> {
                KvCache cache = backend.allocateKvCache(2, 1, context, kvHeads, headDim);
                if (startPos > 0) {
                    backend.storeKv(cache, 1, input(backend, earlierKeys), input(backend, earlierValues),
                            RowPositions.run(0, 0, startPos));
                }
                RowPositions placed = RowPositions.run(0, startPos, rows);
                backend.storeKv(cache, 1, input(backend, keys), input(backend, values), placed);
                Buffer out = backend.allocate(q.length);
                backend.attention(input(backend, q), cache, 1, out, placed, heads);
                return read(backend, out, q.length);
            });
        }
        OpenClBackend backend = backends.get(design);
        KvCache cache = backend.allocateKvCache(1, 2, 20, 1, 8);
        Buffer kv = backend.allocate(21 * 8);
        assertThrows(IllegalArgumentException.class, () -> backend.storeKv(cache, 0, kv, kv, RowPositions.run(0, 0, 21)));
        assertThrows(IllegalArgumentException.class, () -> backend.storeKv(cache, 0, kv, kv, RowPositions.run(0, 20, 1)));
        assertThrows(IllegalArgumentException.class, () -> backend.storeKv(cache, 0, kv, kv, RowPositions.run(2, 0, 1)));
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void ropeStoreKvAndAttentionOfSeveralSequencesMatchOracle(KernelDesign design) {
        // Rows of three sequences in one forward, at unrelated positions, one sequence split in two runs: each row
        // turns by its own position, writes to its own sequence and sees only that sequence's positions. The cache
        // is filled first, sequence by sequence, so that a row that looked at another sequence would read other keys.
        int heads = 16, kvHeads = 8, headDim = 128, context = 80, kvDim = kvHeads * headDim;
        int[] lengths = {70, 5, 33};
        int[] sequences = {0, 0, 2, 1, 0, 0};
        int[] positions = {70, 12, 33, 5, 0, 71};
        float[][] earlierKeys = new float[3][], earlierValues = new float[3][];
        for (int s = 0; s < 3; s++) {
            earlierKeys[s] = random(random, lengths[s] * kvDim);
            earlierValues[s] = random(random, lengths[s] * kvDim);
        }
        int rows = sequences.length;
        float[] keys = random(random, rows * kvDim), values = random(random, rows * kvDim);
        float[] q = random(random, rows * heads * headDim);
        Rope rope = Rope.plain(headDim, 1_000_000);
        assertMatchesOracle(design, "several sequences", backend -> {
            KvCache cache = backend.allocateKvCache(1, 3, context, kvHeads, headDim);
            for (int s = 0; s < 3; s++) {
                backend.storeKv(cache, 0, input(backend, earlierKeys[s]), input(backend, earlierValues[s]),
                        RowPositions.run(s, 0, lengths[s]));
            }
            RowPositions placed = RowPositions.of(positions, sequences);
            Buffer qs = input(backend, q), ks = input(backend, keys);
            backend.rope(qs, placed, heads, rope);
            backend.rope(ks, placed, kvHeads, rope);
            backend.storeKv(cache, 0, ks, input(backend, values), placed);
            Buffer out = backend.allocate(q.length);
            backend.attention(qs, cache, 0, out, placed, heads);
            float[] result = new float[q.length + keys.length];
            System.arraycopy(read(backend, out, q.length), 0, result, 0, q.length);
            System.arraycopy(read(backend, ks, keys.length), 0, result, q.length, keys.length);
            return result;
        });
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void elementwiseOpsCopyAndArgmaxMatchOracle(KernelDesign design) {
        int length = 1001;
        float[] gate = random(random, length);
        float[] up = random(random, length);
        assertMatchesOracle(design, "siluMul", backend -> {
            Buffer g = input(backend, gate);
            backend.siluMul(g, input(backend, up), g, length);
            return read(backend, g, length);
        });
        assertMatchesOracle(design, "add", backend -> {
            Buffer g = input(backend, gate);
            Buffer u = input(backend, up);
            backend.add(g, u, length);
            backend.siluMul(u, u, u, 0); // length 0 is a no-op: u keeps its values
            float[] both = new float[2 * length];
            System.arraycopy(read(backend, g, length), 0, both, 0, length);
            System.arraycopy(read(backend, u, length), 0, both, length, length);
            return both;
        });
        Function<Backend, float[]> copy = backend -> {
            Buffer dst = backend.allocate(20);
            backend.copy(input(backend, up), 100, dst, 5, 10);
            return read(backend, dst, 20);
        };
        assertArrayEquals(copy.apply(oracle), copy.apply(backends.get(design)), design + " copy");

        float[] logits = random(random, 3000);
        logits[1234] = 50f;
        logits[2345] = 50f;
        logits[99] = 60f; // before the window: must not count
        OpenClBackend backend = backends.get(design);
        Buffer onDevice = input(backend, logits);
        Buffer onOracle = input(oracle, logits);
        for (int[] window : new int[][] {{100, 2800}, {99, 1}, {0, 3000}, {1235, 1765}, {7, 1000}}) {
            int expected = oracle.argmax(onOracle, window[0], window[1]);
            assertEquals(expected, backend.argmax(onDevice, window[0], window[1]),
                    design + " argmax of " + window[1] + " at " + window[0]);
        }
        assertEquals(1234 - 100, backend.argmax(onDevice, 100, 2800), design + " argmax keeps the first tie");
    }
}
