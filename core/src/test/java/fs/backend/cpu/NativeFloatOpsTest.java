package fs.backend.cpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * libfscpu's float operations (every variant this CPU runs) against the Java kernels they stand in for, through the
 * backend: rope, silu·mul and add element by element, so bit for bit at any vector width; attention bit for bit at
 * any width too (its lanes are the Java kernels' own); rmsnorm bit for bit where the Java kernels run 16 lanes (the
 * order the native sums follow), else within the float rounding of a reordered sum. Widths leave tails after the
 * vectors.
 */
class NativeFloatOpsTest {
    private static final VectorBackend JAVA = new VectorBackend(1, CpuKernels.vectorApi());
    private static final Arena ARENA = Arena.ofAuto();

    static List<String> variants() {
        return NativeKernelsTest.variants();
    }

    private static VectorBackend nativeBackend(String isa) {
        return new VectorBackend(2, CpuKernels.nativeKernels(isa));
    }

    @ParameterizedTest
    @MethodSource("variants")
    void rmsNormIsTheJavaKernels(String isa) {
        Random random = new Random(1);
        try (VectorBackend backend = nativeBackend(isa)) {
            for (int width : new int[] {16, 40, 1000, 1024}) {
                int rows = 3;
                float[] x = randomFloats(random, rows * width);
                for (int i = 0; i < width; i += 7) x[i] *= 1000; // outliers, as real activations have
                for (DType dtype : new DType[] {DType.F32, DType.BF16}) {
                    Tensor gamma = gamma(dtype, random, width);
                    float[] expected = rmsNorm(JAVA, x, gamma, rows), actual = rmsNorm(backend, x, gamma, rows);
                    if (MatmulKernels.L == 16) {
                        assertArrayEquals(expected, actual, isa + " width " + width);
                    } else {
                        for (int i = 0; i < expected.length; i++) {
                            assertTrue(Math.abs(expected[i] - actual[i]) <= 1e-6f * Math.abs(expected[i]),
                                    isa + " width " + width + " element " + i + ": " + actual[i] + " vs " + expected[i]);
                        }
                    }
                }
            }
        }
    }

    private static float[] randomFloats(Random random, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) random.nextGaussian();
        return a;
    }

    /** Norm weights 1 + N(0, 0.1²) as f32 or bf16 (bf16: the upper half of the float). */
    private static Tensor gamma(DType dtype, Random random, int width) {
        MemorySegment data = ARENA.allocate((long) width * dtype.rowBytes(1), 4);
        for (int i = 0; i < width; i++) {
            float v = 1 + 0.1f * (float) random.nextGaussian();
            if (dtype == DType.F32) data.setAtIndex(JAVA_FLOAT, i, v);
            else data.setAtIndex(JAVA_SHORT, i, (short) (Float.floatToRawIntBits(v) >>> 16));
        }
        return new Tensor("gamma", dtype, new long[] {width}, data);
    }

    /** A buffer holding {@code values}: the rows of an f32 table embedded (no op writes host floats). */
    private static Buffer buffer(Backend backend, float[] values) {
        MemorySegment table = ARENA.allocate(values.length * 4L, 4);
        MemorySegment.copy(values, 0, table, JAVA_FLOAT, 0, values.length);
        Buffer b = backend.allocate(values.length);
        backend.embed(backend.upload(new Tensor("values", DType.F32, new long[] {1, values.length}, table)),
                new int[] {0}, b);
        return b;
    }

    private static float[] read(Backend backend, Buffer b) {
        float[] out = new float[(int) b.length()];
        backend.read(b, 0, out);
        return out;
    }

    private static float[] rmsNorm(Backend backend, float[] x, Tensor gamma, int rows) {
        Buffer b = buffer(backend, x);
        backend.rmsNorm(b, backend.upload(gamma), b, rows, 1e-6f);
        return read(backend, b);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void ropeIsTheJavaKernelsBitForBit(String isa) {
        Random random = new Random(2);
        try (VectorBackend backend = nativeBackend(isa)) {
            for (int headDim : new int[] {20, 64, 128}) {
                int rows = 5, heads = 3;
                Rope rope = Rope.plain(headDim, 1_000_000);
                float[] x = randomFloats(random, rows * heads * headDim);
                assertArrayEquals(rope(JAVA, x, rows, heads, 7, rope), rope(backend, x, rows, heads, 7, rope),
                        isa + " head_dim " + headDim);
            }
        }
    }

    private static float[] rope(Backend backend, float[] x, int rows, int heads, int startPos, Rope rope) {
        Buffer b = buffer(backend, x);
        backend.rope(b, RowPositions.run(0, startPos, rows), heads, rope);
        return read(backend, b);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void siluMulAndAddAreTheJavaKernelsBitForBit(String isa) {
        Random random = new Random(3);
        try (VectorBackend backend = nativeBackend(isa)) {
            // Past one worker unit (2^14) with a tail; gates far beyond exp's clamp at both ends.
            int n = (1 << 14) + 1000 + 5;
            float[] gate = randomFloats(random, n), up = randomFloats(random, n);
            for (int i = 0; i < n; i += 11) gate[i] *= 150;
            assertArrayEquals(siluMul(JAVA, gate, up), siluMul(backend, gate, up), isa + " siluMul");
            assertArrayEquals(add(JAVA, gate, up), add(backend, gate, up), isa + " add");
        }
    }

    private static float[] siluMul(Backend backend, float[] gate, float[] up) {
        Buffer g = buffer(backend, gate), u = buffer(backend, up), out = backend.allocate(gate.length);
        backend.siluMul(g, u, out, gate.length);
        return read(backend, out);
    }

    private static float[] add(Backend backend, float[] x, float[] y) {
        Buffer a = buffer(backend, x), b = buffer(backend, y);
        backend.add(a, b, x.length);
        return read(backend, a);
    }

    @ParameterizedTest
    @MethodSource("variants")
    void argmaxIsTheFirstLargestAsTheJavaKernel(String isa) {
        Random random = new Random(5);
        try (VectorBackend backend = nativeBackend(isa)) {
            for (int n : new int[] {1, 17, 8064, 151936}) {
                float[] x = randomFloats(random, n);
                int top = random.nextInt(n), tie = Math.min(n - 1, top + 1 + random.nextInt(5));
                x[top] = x[tie] = 9f; // a tie: the first wins
                Buffer b = buffer(backend, x), j = buffer(JAVA, x);
                assertEquals(JAVA.argmax(j, 0, n), backend.argmax(b, 0, n), isa + " n " + n);
                assertEquals(top, backend.argmax(b, 0, n), isa + " n " + n);
                if (n > 1) assertEquals(JAVA.argmax(j, 1, n - 1), backend.argmax(b, 1, n - 1), isa + " offset 1");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("variants")
    void attentionIsTheJavaKernelsBitForBit(String isa) {
        Random random = new Random(4);
        try (VectorBackend backend = nativeBackend(isa)) {
            for (int headDim : new int[] {24, 128}) {
                for (int group : new int[] {1, 3}) {
                    for (int startPos : new int[] {0, 5, 70}) {
                        for (int rows : new int[] {1, 9}) {
                            int kvHeads = 2, heads = kvHeads * group, width = kvHeads * headDim;
                            // Two sequences in one batch: the second's rows sit after the first's, at other positions.
                            int[] positions = new int[2 * rows], sequences = new int[2 * rows];
                            for (int r = 0; r < rows; r++) {
                                positions[r] = startPos + r;
                                positions[rows + r] = 2 * startPos + r;
                                sequences[rows + r] = 1;
                            }
                            int context = 2 * startPos + rows;
                            float[] past = randomFloats(random, 2 * context * width);
                            float[] k = randomFloats(random, 2 * rows * width), v = randomFloats(random, 2 * rows * width);
                            float[] q = randomFloats(random, 2 * rows * heads * headDim);
                            RowPositions placed = RowPositions.of(positions, sequences);
                            String where = isa + " head_dim " + headDim + " group " + group + " startPos " + startPos
                                    + " rows " + rows;
                            assertArrayEquals(attention(JAVA, past, k, v, q, placed, heads, kvHeads, headDim, context),
                                    attention(backend, past, k, v, q, placed, heads, kvHeads, headDim, context), where);
                        }
                    }
                }
            }
        }
    }

    /**
     * Over a cache of f16, bf16 or q8_0 rows every variant computes what the Java kernels do, in another order of the
     * float32 operations (vector dot products, a sum of exponentials in lanes): within 2⁻¹⁶ of the largest value.
     */
    @ParameterizedTest
    @MethodSource("variants")
    void attentionOverTypedCachesIsTheJavaKernelsWithinFloat32Rounding(String isa) {
        Random random = new Random(5);
        List<KvCacheTypes> typed = List.of(KvCacheTypes.F16, new KvCacheTypes(KvCacheType.BF16, KvCacheType.BF16),
                new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.Q8_0), new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F32));
        try (VectorBackend backend = nativeBackend(isa)) {
            for (KvCacheTypes types : typed) {
                for (int headDim : new int[] {24, 64, 128}) {
                    if (!types.keys().fits(headDim) || !types.values().fits(headDim)) continue; // q8_0: blocks of 32
                    for (int startPos : new int[] {0, 300}) {
                        for (int rows : new int[] {1, 9}) {
                            int kvHeads = 2, group = 3, heads = kvHeads * group, width = kvHeads * headDim;
                            int[] positions = new int[2 * rows], sequences = new int[2 * rows];
                            for (int r = 0; r < rows; r++) {
                                positions[r] = startPos + r;
                                positions[rows + r] = 2 * startPos + r;
                                sequences[rows + r] = 1;
                            }
                            int context = 2 * startPos + rows;
                            float[] past = randomFloats(random, 2 * context * width);
                            float[] k = randomFloats(random, 2 * rows * width), v = randomFloats(random, 2 * rows * width);
                            float[] q = randomFloats(random, 2 * rows * heads * headDim);
                            RowPositions placed = RowPositions.of(positions, sequences);
                            float[] java = attention(JAVA, past, k, v, q, placed, heads, kvHeads, headDim, context, types);
                            float[] natively = attention(backend, past, k, v, q, placed, heads, kvHeads, headDim, context,
                                    types);
                            double largest = 0;
                            for (float x : past) largest = Math.max(largest, Math.abs(x));
                            for (int i = 0; i < java.length; i++) {
                                assertEquals(java[i], natively[i], largest * 0x1p-16, isa + " " + types + " head_dim "
                                        + headDim + " startPos " + startPos + " rows " + rows + " element " + i);
                            }
                        }
                    }
                }
            }
        }
    }

    private static float[] attention(Backend backend, float[] past, float[] k, float[] v, float[] q,
                                     RowPositions placed, int heads, int kvHeads, int headDim, int context) {
        return attention(backend, past, k, v, q, placed, heads, kvHeads, headDim, context, KvCacheTypes.F32);
    }

    /** Both sequences' earlier positions stored from {@code past}, then the batch's rows, then attention. */
    private static float[] attention(Backend backend, float[] past, float[] k, float[] v, float[] q,
                                     RowPositions placed, int heads, int kvHeads, int headDim, int context,
                                     KvCacheTypes types) {
        int layer = 1, width = kvHeads * headDim;
        KvCache cache = backend.allocateKvCache(2, 2, context, kvHeads, headDim, types);
        Buffer history = buffer(backend, past);
        for (int sequence = 0; sequence < 2; sequence++) {
            Buffer keys = backend.allocate((long) context * width), values = backend.allocate((long) context * width);
            backend.copy(history, (long) sequence * context * width, keys, 0, (long) context * width);
            backend.copy(history, (long) sequence * context * width, values, 0, (long) context * width);
            backend.storeKv(cache, layer, keys, values, RowPositions.run(sequence, 0, context));
        }
        backend.storeKv(cache, layer, buffer(backend, k), buffer(backend, v), placed);
        Buffer out = backend.allocate(q.length);
        backend.attention(buffer(backend, q), cache, layer, out, placed, heads);
        return read(backend, out);
    }
}
