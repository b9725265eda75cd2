package fs.backend.opencl;

import static fs.backend.opencl.OpenClTestSupport.assertClose;
import static fs.backend.opencl.OpenClTestSupport.random;
import static fs.backend.opencl.OpenClTestSupport.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import fs.FsException;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Weight;
import fs.tensor.DType;
import java.lang.foreign.Arena;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every op of both kernel designs against a float64 reference, on random inputs with odd sizes (ragged tiles, K not
 * a multiple of 8, several attention chunks).
 */
class OpenClBackendTest {
    private final Random random = new Random(42);
    private Arena arena;

    @BeforeEach
    void open() {
        arena = Arena.ofConfined();
    }

    @AfterEach
    void close() {
        arena.close();
    }

    private OpenClBackend backend(KernelDesign design) {
        return new OpenClBackend(OpenClTestSupport.device(), design);
    }

    private Buffer upload(OpenClBackend backend, float[] values) {
        Weight staging = backend.upload(tensor("x", DType.F32, values, arena, values.length));
        Buffer buffer = backend.allocate(values.length);
        // embed of token 0 from a one-row table is a plain device copy of the values
        backend.embed(staging, new int[] {0}, buffer);
        return buffer;
    }

    private static float[] read(OpenClBackend backend, Buffer buffer, int length) {
        float[] values = new float[length];
        backend.read(buffer, 0, values);
        return values;
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void matmulMatchesReferenceForEveryDtypeAndShape(KernelDesign design) {
        int[][] shapes = {{1, 37, 203}, {1, 64, 256}, {3, 45, 83}, {19, 33, 40}};
        try (OpenClBackend backend = backend(design)) {
            for (DType dtype : new DType[] {DType.F32, DType.F16, DType.BF16}) {
                for (int[] shape : shapes) {
                    int rows = shape[0], n = shape[1], k = shape[2];
                    float[] w = random(random, n * k);
                    Weight weight = backend.upload(tensor("w", dtype, w, arena, n, k));
                    float[] x = random(random, rows * k);
                    Buffer out = backend.allocate((long) rows * n);
                    backend.matmul(upload(backend, x), weight, out, rows);
                    double[] expected = new double[rows * n];
                    for (int r = 0; r < rows; r++) {
                        for (int j = 0; j < n; j++) {
                            double sum = 0;
                            for (int i = 0; i < k; i++) sum += (double) x[r * k + i] * w[j * k + i];
                            expected[r * n + j] = sum;
                        }
                    }
                    assertClose(expected, read(backend, out, rows * n), design + " matmul " + dtype + " " + rows
                            + "x" + n + "x" + k);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void embedAndRmsNormMatchReference(KernelDesign design) {
        int vocab = 11, width = 77, rows = 3;
        try (OpenClBackend backend = backend(design)) {
            for (DType dtype : new DType[] {DType.F32, DType.F16, DType.BF16}) {
                float[] table = random(random, vocab * width);
                float[] gamma = random(random, width);
                Weight tableWeight = backend.upload(tensor("table", dtype, table, arena, vocab, width));
                Weight gammaWeight = backend.upload(tensor("gamma", dtype, gamma, arena, width));
                int[] tokens = {7, 0, 10};
                Buffer x = backend.allocate((long) rows * width);
                backend.embed(tableWeight, tokens, x);
                double[] embedded = new double[rows * width];
                for (int r = 0; r < rows; r++) {
                    for (int c = 0; c < width; c++) embedded[r * width + c] = table[tokens[r] * width + c];
                }
                float[] actual = read(backend, x, rows * width);
                assertClose(embedded, actual, design + " embed " + dtype);

                backend.rmsNorm(x, gammaWeight, x, rows, 1e-6f);
                double[] expected = new double[rows * width];
                for (int r = 0; r < rows; r++) {
                    double squares = 0;
                    for (int c = 0; c < width; c++) squares += embedded[r * width + c] * embedded[r * width + c];
                    double inv = 1 / Math.sqrt(squares / width + 1e-6);
                    for (int c = 0; c < width; c++) expected[r * width + c] = embedded[r * width + c] * inv * gamma[c];
                }
                assertClose(expected, read(backend, x, rows * width), design + " rmsNorm " + dtype);
            }
            Weight table = backend.upload(tensor("table", DType.F32, random(random, 8), arena, 4, 2));
            FsException e = assertThrows(FsException.class, () -> backend.embed(table, new int[] {4}, backend.allocate(2)));
            assertEquals("token id 4 is outside the vocabulary of table (0..3)", e.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void ropeMatchesReference(KernelDesign design) {
        int rows = 3, heads = 2, headDim = 16, startPos = 7;
        float theta = 1_000_000f;
        float[] x = random(random, rows * heads * headDim);
        try (OpenClBackend backend = backend(design)) {
            Buffer buffer = upload(backend, x);
            backend.rope(buffer, rows, heads, headDim, startPos, theta);
            double[] expected = new double[x.length];
            int half = headDim / 2;
            for (int r = 0; r < rows; r++) {
                for (int h = 0; h < heads; h++) {
                    int base = (r * heads + h) * headDim;
                    for (int i = 0; i < half; i++) {
                        double angle = (startPos + r) * Math.pow(theta, -2.0 * i / headDim);
                        double a = x[base + i], b = x[base + i + half];
                        expected[base + i] = a * Math.cos(angle) - b * Math.sin(angle);
                        expected[base + i + half] = b * Math.cos(angle) + a * Math.sin(angle);
                    }
                }
            }
            assertClose(expected, read(backend, buffer, x.length), design + " rope");
        }
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void storeKvAndAttentionMatchReference(KernelDesign design) {
        // GQA 6 query heads on 2 KV heads; 300 earlier positions span several 256-position chunks of attention_gpu
        int heads = 6, kvHeads = 2, headDim = 24, context = 320, startPos = 300, rows = 5;
        int kvDim = kvHeads * headDim;
        float[] keys = random(random, (startPos + rows) * kvDim);
        float[] values = random(random, (startPos + rows) * kvDim);
        float[] q = random(random, rows * heads * headDim);
        try (OpenClBackend backend = backend(design)) {
            KvCache cache = backend.allocateKvCache(2, context, kvHeads, headDim);
            backend.storeKv(cache, 1, upload(backend, keys), upload(backend, values), startPos + rows, 0);
            Buffer out = backend.allocate(q.length);
            backend.attention(upload(backend, q), cache, 1, out, rows, startPos, heads);
            double[] expected = new double[q.length];
            for (int r = 0; r < rows; r++) {
                for (int h = 0; h < heads; h++) {
                    int kvBase = h / (heads / kvHeads) * headDim;
                    int length = startPos + r + 1;
                    double[] scores = new double[length];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int p = 0; p < length; p++) {
                        for (int d = 0; d < headDim; d++) {
                            scores[p] += (double) q[(r * heads + h) * headDim + d] * keys[p * kvDim + kvBase + d];
                        }
                        scores[p] /= Math.sqrt(headDim);
                        max = Math.max(max, scores[p]);
                    }
                    double sum = 0;
                    for (int p = 0; p < length; p++) sum += scores[p] = Math.exp(scores[p] - max);
                    for (int p = 0; p < length; p++) {
                        for (int d = 0; d < headDim; d++) {
                            expected[(r * heads + h) * headDim + d] += scores[p] / sum * values[p * kvDim + kvBase + d];
                        }
                    }
                }
            }
            assertClose(expected, read(backend, out, q.length), design + " attention");
            assertThrows(IllegalArgumentException.class,
                    () -> backend.storeKv(cache, 0, out, out, 21, context - 20));
        }
    }

    @ParameterizedTest
    @EnumSource(KernelDesign.class)
    void elementwiseOpsCopyAndArgmax(KernelDesign design) {
        int length = 1001;
        float[] gate = random(random, length);
        float[] up = random(random, length);
        try (OpenClBackend backend = backend(design)) {
            Buffer gateBuffer = upload(backend, gate);
            Buffer upBuffer = upload(backend, up);
            backend.siluMul(gateBuffer, upBuffer, gateBuffer, length);
            double[] silu = new double[length];
            for (int i = 0; i < length; i++) silu[i] = gate[i] / (1 + Math.exp(-gate[i])) * up[i];
            assertClose(silu, read(backend, gateBuffer, length), design + " siluMul");

            backend.add(gateBuffer, upBuffer, length);
            double[] sum = new double[length];
            float[] afterSilu = read(backend, gateBuffer, length);
            backend.siluMul(upBuffer, upBuffer, upBuffer, 0); // length 0 is a no-op
            for (int i = 0; i < length; i++) sum[i] = silu[i] + up[i];
            assertClose(sum, afterSilu, design + " add");

            Buffer copy = backend.allocate(20);
            backend.copy(upBuffer, 100, copy, 5, 10);
            float[] copied = read(backend, copy, 20);
            float[] expectedCopy = new float[20];
            System.arraycopy(up, 100, expectedCopy, 5, 10);
            assertArrayEquals(expectedCopy, copied);

            float[] logits = random(random, 3000);
            logits[1234] = 50f;
            logits[2345] = 50f;
            logits[99] = 60f; // before the window: must not count
            Buffer logitsBuffer = upload(backend, logits);
            assertEquals(1234 - 100, backend.argmax(logitsBuffer, 100, 2800), design + " argmax keeps the first tie");
            assertEquals(0, backend.argmax(logitsBuffer, 99, 1));
        }
    }
}
