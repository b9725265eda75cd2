package fs.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.tensor.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The quantizers against llama.cpp's own files of q-tied: each tensor of model-BF16.gguf, decoded to float and
 * quantized to the type llama-quantize chose for it in model-T.gguf (with imatrix.gguf's importance where llama.cpp
 * used it: the IQ2_XXS file, for the tensors the matrix covers), must give llama.cpp's bytes, every block. That is
 * stronger than any error bound: the same bytes dequantize to the same floats.
 */
class RowQuantizersTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** llama-imatrix's importance matrix for q-tied, the one llama-quantize made the IQ2_XXS file with. */
    private static final Path IMATRIX = QTied.dir().resolve("imatrix.gguf");
    private static final Path WEIGHTED = QTied.dir().resolve("quantized-with-imatrix.gguf");

    /**
     * Every quantized tensor of llama.cpp's files, once per (name, type, importance or not): the presets store
     * some tensors alike (the embedding is Q6_K in five files), and quantizing the same rows twice proves nothing more.
     * Then the importance-weighted paths no preset file took: quantized-with-imatrix.gguf holds two tensors in each
     * of Q8_0, Q4_0, Q3_K, Q4_K, Q5_K and Q6_K as llama.cpp's ggml_quantize_chunk (libggml-base, the function
     * llama-quantize calls) wrote them with imatrix.gguf's importance, named TYPE/TENSOR.
     */
    static Stream<Arguments> tensors() {
        Map<String, Arguments> cases = new LinkedHashMap<>();
        try (GgufFile imatrix = GgufFile.open(IMATRIX)) {
            for (String type : QTied.TYPES) {
                if (type.equals("BF16")) continue;
                String file = QTied.gguf(type).getFileName().toString();
                try (GgufFile gguf = GgufFile.open(QTied.gguf(type))) {
                    for (GgufTensor tensor : gguf.tensors()) {
                        if (tensor.type() == DType.F32) continue; // norms: llama.cpp keeps them as they are
                        // llama-quantize used the matrix for every tensor it covers, and only in the IQ2_XXS file
                        boolean weighted = type.equals("IQ2_XXS") && importance(imatrix, tensor.name()) != null;
                        String key = tensor.name() + " " + tensor.type() + (weighted ? " weighted" : "");
                        cases.putIfAbsent(key, Arguments.of(file, tensor.name(), tensor.type(), weighted));
                    }
                }
            }
        }
        try (GgufFile gguf = GgufFile.open(WEIGHTED)) {
            for (GgufTensor tensor : gguf.tensors()) {
                cases.put(tensor.name(), Arguments.of(WEIGHTED.getFileName().toString(), tensor.name(), tensor.type(),
                        true));
            }
        }
        return cases.values().stream();
    }

    @ParameterizedTest(name = "{1} as {2} ({0}, importance: {3})")
    @MethodSource("tensors")
    void quantizesToLlamaCppsBytes(String file, String name, DType type, boolean weighted) {
        String sourceName = name.substring(name.indexOf('/') + 1); // TYPE/TENSOR in quantized-with-imatrix.gguf
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"));
                GgufFile reference = GgufFile.open(QTied.dir().resolve(file));
                GgufFile imatrix = GgufFile.open(IMATRIX);
                Arena arena = Arena.ofConfined()) {
            GgufTensor expected = reference.tensor(name).orElseThrow();
            assertEquals(type, expected.type());
            float[] weights = decode(source.tensor(sourceName).orElseThrow());
            int rows = (int) expected.rows();
            int columns = (int) expected.columns();
            float[] importance = weighted ? importance(imatrix, sourceName) : null;
            MemorySegment out = arena.allocate(expected.data().byteSize());
            RowQuantizers.of(type).quantize(weights, rows, columns, importance, out, 0);
            int blockBytes = type.blockBytes();
            long blocks = out.byteSize() / blockBytes;
            long same = 0;
            for (long b = 0; b < blocks; b++) {
                long at = b * blockBytes;
                if (out.asSlice(at, blockBytes).mismatch(expected.data().asSlice(at, blockBytes)) < 0) same++;
            }
            if (same != blocks) {
                double[] rmse = rmse(weights, rows, columns, expected, out);
                throw new AssertionError(expected + ": " + same + " of " + blocks + " blocks are llama.cpp's; RMSE "
                        + rmse[0] + " against llama.cpp's " + rmse[1] + " (ratio " + rmse[0] / rmse[1] + ")");
            }
        }
    }

    /** A bf16 tensor's rows, as float32 (exact: a bf16 is the top half of a float). */
    private static float[] decode(GgufTensor bf16) {
        int rows = (int) bf16.rows();
        int columns = (int) bf16.columns();
        float[] weights = new float[rows * columns];
        float[] row = new float[columns];
        for (int r = 0; r < rows; r++) {
            ReferenceDequantizer.decode(DType.BF16, bf16.row(r), row);
            System.arraycopy(row, 0, weights, r * columns, columns);
        }
        return weights;
    }

    /** RMSE of (ours − original) and (llama.cpp's − original), both dequantized by the reference decoder. */
    private static double[] rmse(float[] weights, int rows, int columns, GgufTensor expected, MemorySegment ours) {
        float[] a = new float[columns];
        float[] b = new float[columns];
        double sa = 0;
        double sb = 0;
        long rowBytes = expected.rowBytes();
        for (int r = 0; r < rows; r++) {
            ReferenceDequantizer.decode(expected.type(), ours.asSlice(r * rowBytes, rowBytes), a);
            ReferenceDequantizer.decode(expected.type(), expected.row(r), b);
            for (int c = 0; c < columns; c++) {
                double w = weights[r * columns + c];
                sa += (a[c] - w) * (a[c] - w);
                sb += (b[c] - w) * (b[c] - w);
            }
        }
        return new double[] {Math.sqrt(sa / weights.length), Math.sqrt(sb / weights.length)};
    }

    /** llama-quantize's importance for a tensor: in_sum2 / counts, or null where the matrix has no entry. */
    private static float[] importance(GgufFile imatrix, String tensor) {
        Optional<GgufTensor> sums = imatrix.tensor(tensor + ".in_sum2");
        if (sums.isEmpty()) return null;
        float count = imatrix.tensor(tensor + ".counts").orElseThrow().data().get(F32, 0);
        float[] values = new float[(int) sums.get().columns()];
        for (int i = 0; i < values.length; i++) {
            float sum = sums.get().data().getAtIndex(F32, i);
            values[i] = count > 0 ? sum / count : 1;
        }
        return values;
    }

    @Test
    void iq2XxsRefusesToQuantizeWithoutImportance() {
        FsException e = assertThrows(FsException.class, () -> RowQuantizers.of(DType.IQ2_XXS)
                .quantize(new float[256], 1, 256, null, MemorySegment.ofArray(new byte[66]), 0));
        assertEquals("IQ2_XXS needs an importance matrix (--imatrix), as llama.cpp does", e.getMessage());
    }

    @Test
    void everyGgufTypeFsReadsHasAQuantizerAndNoOtherTypeHas() {
        for (DType type : DType.values()) {
            if (type.isGgmlType()) {
                assertTrue(RowQuantizers.of(type) != null, type.toString());
            } else {
                FsException e = assertThrows(FsException.class, () -> RowQuantizers.of(type));
                assertTrue(e.getMessage().startsWith("no quantizer for " + type + ": "), e.getMessage());
            }
        }
    }

    /** model-BF16.gguf's tensors decoded to float and written back as BF16 are the file's bytes. */
    @Test
    void bf16WeightsWrittenAsBf16AreTheFilesBytes() {
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16")); Arena arena = Arena.ofConfined()) {
            for (GgufTensor tensor : source.tensors()) {
                if (tensor.type() != DType.BF16) continue;
                MemorySegment out = arena.allocate(tensor.data().byteSize());
                RowQuantizers.of(DType.BF16).quantize(decode(tensor), (int) tensor.rows(), (int) tensor.columns(),
                        null, out, 0);
                assertEquals(-1, out.mismatch(tensor.data()), tensor.toString());
            }
        }
    }

    @Test
    void f16AndBf16RoundToNearestEvenAsGgmlDoes() {
        float[] weights = {
            1 + 0x1p-11f, 1 + 3 * 0x1p-11f, 65520f, -0f, // f16 ties: down to even, up to even, to ∞ (as ggml's)
            Float.intBitsToFloat(0x3F808000), Float.intBitsToFloat(0x3F818000), Float.intBitsToFloat(0x3F808001)
        };
        short[] f16 = {0x3C00, 0x3C02, 0x7C00, (short) 0x8000};
        short[] bf16 = {0x3F80, 0x3F82, 0x3F81};
        MemorySegment out = MemorySegment.ofArray(new byte[2 * weights.length]);
        RowQuantizers.of(DType.F16).quantize(weights, 1, weights.length, null, out, 0);
        ValueLayout.OfShort half = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < f16.length; i++) assertEquals(f16[i], out.get(half, 2L * i), "f16 " + i);
        RowQuantizers.of(DType.BF16).quantize(weights, 1, weights.length, null, out, 0);
        for (int i = 0; i < bf16.length; i++) assertEquals(bf16[i], out.get(half, 2L * (4 + i)), "bf16 " + i);
    }

    @Test
    void theRoundingsAreGgmlsNearestEvenAndCsRoundfAwayFromZero() {
        // nearest_int (K-quants, IQ2_XXS) rounds ties to even; roundf (Q8_0) away from zero; Math.round does neither
        assertEquals(2, QuantMath.nearestInt(2.5f));
        assertEquals(4, QuantMath.nearestInt(3.5f));
        assertEquals(-2, QuantMath.nearestInt(-2.5f));
        assertEquals(3f, QuantMath.roundf(2.5f));
        assertEquals(-3f, QuantMath.roundf(-2.5f));
        assertEquals(0f, QuantMath.roundf(0.49999997f)); // float(x + 0.5) would round up to 1
        // and x86's conversion of what does not fit: 0x80000000, whose low byte is 0 (Java's cast gives -1)
        assertEquals(0, (byte) QuantMath.truncate(Float.POSITIVE_INFINITY));
        assertEquals(0, (byte) QuantMath.truncate(Float.NaN));
    }

    @Test
    void rowsMustHoldWholeBlocks() {
        assertThrows(IllegalArgumentException.class, () -> RowQuantizers.of(DType.Q4_K)
                .quantize(new float[128], 1, 128, null, MemorySegment.ofArray(new byte[144]), 0));
    }

    @Test
    void aNonFiniteWeightOrImportanceIsRefusedWithItsPlace() {
        float[] weights = new float[2 * 256];
        weights[256 + 7] = Float.NaN;
        MemorySegment out = MemorySegment.ofArray(new byte[2 * 210]);
        FsException e = assertThrows(FsException.class,
                () -> RowQuantizers.of(DType.Q6_K).quantize(weights, 2, 256, null, out, 0));
        assertEquals("weight 7 of row 1 is NaN: Q6_K holds finite weights only", e.getMessage());
        float[] importance = new float[256];
        importance[3] = -1;
        e = assertThrows(FsException.class,
                () -> RowQuantizers.of(DType.Q4_K).quantize(new float[256], 1, 256, importance, out, 0));
        assertEquals("the importance of column 3 is -1.0: importances are finite and not negative", e.getMessage());
    }

    /**
     * Weights so small that 1 / d overflows: x / d is ±∞, which x86 converts to 0x80000000 (low byte 0) where
     * Java's cast saturates; llama.cpp's bytes (checked against libggml-base) are all zero for both types.
     */
    @Test
    void blocksOfWeightsBelowFloatRangeOfTheInverseScaleAreLlamaCppsZeroBytes() {
        float[] weights = new float[32];
        java.util.Arrays.fill(weights, 1e-40f);
        weights[5] = -3e-40f;
        for (DType type : List.of(DType.Q8_0, DType.Q4_0)) {
            byte[] out = new byte[type.blockBytes()];
            java.util.Arrays.fill(out, (byte) 0x55);
            RowQuantizers.of(type).quantize(weights, 1, 32, null, MemorySegment.ofArray(out), 0);
            assertEquals(-1, java.util.Arrays.mismatch(out, new byte[type.blockBytes()]), type.toString());
        }
    }
}
