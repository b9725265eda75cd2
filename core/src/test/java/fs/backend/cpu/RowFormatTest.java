package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Buffer;
import fs.backend.Weight;
import fs.format.ReferenceDequantizer;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.safetensors.SafetensorsFile;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each CPU {@link RowFormat} on the tensors llama.cpp wrote in models/q-tied: its rows against llama.cpp's own
 * dequantization, its dot against the float64 W·x of the exact rows, and the one-row matmul's tiles against its dot.
 */
class RowFormatTest {
    /** The file types whose tensors (all but the norms, which are F32) are in formats this class covers. */
    private static final Set<DType> COVERED = EnumSet.of(DType.F32, DType.BF16, DType.Q8_0, DType.Q4_0);

    private static RowFormat format(GgufTensor tensor) {
        return RowFormats.of(tensor.type()).orElseThrow();
    }

    private static boolean covered(GgufTensor tensor) {
        return COVERED.contains(tensor.type());
    }

    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q4_0", "BF16"})
    void dequantizeGivesLlamaCppsFloatsBitForBit(String fileType) {
        int checked = 0;
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
             SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            for (GgufTensor tensor : gguf.tensors()) {
                if (!covered(tensor)) continue;
                QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                int k = (int) tensor.columns();
                for (int i = 0; i < sample.rowIds().length; i++) {
                    // Written at an offset, to catch a format that writes outside out[outOffset, +k).
                    float[] out = new float[k + 3];
                    format(tensor).dequantize(tensor.data(), sample.rowIds()[i] * tensor.rowBytes(), k, out, 2);
                    float[] row = java.util.Arrays.copyOfRange(out, 2, 2 + k);
                    assertArrayEquals(sample.rows()[i], row, tensor + " row " + sample.rowIds()[i]);
                    assertEquals(0f, out[0]);
                    assertEquals(0f, out[k + 2]);
                }
                checked++;
            }
        }
        assertTrue(checked >= 10, "tensors checked: " + checked);
    }

    /**
     * A float32 bound on a dot product computed in any fixed order: a few √k ulps of the terms' magnitudes. A
     * block's largest weight joins each term's magnitude, since a kernel may sum q·x before the scale and (Q4_0) the
     * offset q − 8 are applied.
     */
    static double tolerance(float[] row, float[] x, int blockElements) {
        double magnitude = 0;
        for (int b = 0; b < row.length; b += blockElements) {
            double largest = 0;
            for (int j = b; j < b + blockElements; j++) largest = Math.max(largest, Math.abs(row[j]));
            for (int j = b; j < b + blockElements; j++) magnitude += (Math.abs(row[j]) + largest) * Math.abs(x[j]);
        }
        return 4 * Math.sqrt(row.length) * 0x1p-24 * magnitude;
    }

    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q4_0", "BF16"})
    void dotIsTheExactDotWithinFloat32Rounding(String fileType) {
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
             SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            for (GgufTensor tensor : gguf.tensors()) {
                if (!covered(tensor)) continue;
                QTied.Sample sample = QTied.Sample.of(samples, tensor.name());
                int k = (int) tensor.columns();
                float[] row = new float[k];
                float[] lanes = new float[MatmulKernels.LANES_SCRATCH];
                // x sits at an offset in a longer array, as a matmul's input rows do.
                float[] x = new float[k + 5];
                System.arraycopy(sample.x(), 0, x, 5, k);
                for (int r = 0; r < tensor.rows(); r++) {
                    ReferenceDequantizer.decode(tensor.type(), tensor.row(r), row);
                    float dot = format(tensor).dot(tensor.data(), r * tensor.rowBytes(), x, 5, k, lanes);
                    double exact = sample.matvec()[r];
                    double tolerance = tolerance(row, sample.x(), tensor.type() == DType.BF16 ? 1 : 32);
                    if (!(Math.abs(dot - exact) <= tolerance)) {
                        throw new AssertionError(tensor + " row " + r + ": dot " + dot + ", exact " + exact
                                + ", tolerance " + tolerance);
                    }
                }
            }
        }
    }

    /** A buffer of the backend holding {@code values}: the one row of an f32 table, embedded. */
    static Buffer input(VectorBackend backend, Arena arena, float[] values) {
        MemorySegment table = arena.allocate(values.length * 4L, 4);
        MemorySegment.copy(values, 0, table, MatmulKernels.FLOAT, 0, values.length);
        Buffer b = backend.allocate(values.length);
        backend.embed(backend.upload(new Tensor("x", DType.F32, new long[] {1, values.length}, table)), new int[] {0}, b);
        return b;
    }

    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q4_0", "BF16"})
    void aOneRowMatmulComputesTheFormatsDotOnAnyThreadCount(String fileType) {
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType));
             SafetensorsFile samples = SafetensorsFile.open(QTied.samples(fileType))) {
            for (int threads : new int[] {1, 2, 3}) {
                try (VectorBackend backend = new VectorBackend(threads); Arena arena = Arena.ofConfined()) {
                    for (GgufTensor tensor : gguf.tensors()) {
                        if (!covered(tensor) || tensor.shape().length != 2) continue;
                        float[] x = QTied.Sample.of(samples, tensor.name()).x();
                        float[] expected = new float[(int) tensor.rows()];
                        float[] lanes = new float[MatmulKernels.LANES_SCRATCH];
                        for (int r = 0; r < expected.length; r++) {
                            expected[r] = format(tensor).dot(tensor.data(), r * tensor.rowBytes(), x, 0, x.length,
                                    lanes);
                        }
                        Weight w = backend.upload(new Tensor(tensor.name(), tensor.type(), tensor.shape(), tensor.data()));
                        Buffer out = backend.allocate(expected.length);
                        backend.matmul(input(backend, arena, x), w, out, 1);
                        float[] actual = new float[expected.length];
                        backend.read(out, 0, actual);
                        assertArrayEquals(expected, actual, tensor + ", " + threads + " threads");
                    }
                }
            }
        }
    }
}
