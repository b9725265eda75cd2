package fs.quantize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.format.ReferenceDequantizer;
import fs.format.RowQuantizer;
import fs.format.RowQuantizers;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.model.GgufConfigReader;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * QuantizationRun with a stand-in quantizer for the block formats (the real ones are another piece of work): each
 * row's block bytes start with the bits of the row's first weight, so the file shows whether every row of every
 * tensor landed in its place, whatever the threads did.
 */
class QuantizationRunTest {
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    /** Per tensor width, the importance each call was given (one width per matrix kind here). */
    private final Map<String, float[]> importanceSeen = new ConcurrentHashMap<>();

    private RowQuantizer marker(DType type) {
        return (weights, rows, columns, importance, out, outOffset) -> {
            long rowBytes = type.rowBytes(columns);
            for (int r = 0; r < rows; r++) {
                out.set(I32, outOffset + r * rowBytes, Float.floatToRawIntBits(weights[r * columns]));
            }
            importanceSeen.put(type + " " + columns + " " + (importance == null ? "none" : importance.length),
                    importance == null ? new float[0] : importance);
        };
    }

    private Function<DType, RowQuantizer> quantizers() {
        return type -> type == DType.F32 ? RowQuantizers.of(DType.F32) : marker(type);
    }

    private static Map<String, Tensor> tensors(GgufFile file) {
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (GgufTensor t : file.tensors()) tensors.put(t.name(), new Tensor(t.name(), t.type(), t.shape(), t.data()));
        return tensors;
    }

    /** Progress as a log file gets it: plain lines, no bar redrawn. */
    private static QuantizationProgress logged(QuantizationPlan plan, StringWriter log) {
        return new QuantizationProgress(new PrintWriter(log), false, plan);
    }

    @Test
    void everyRowLandsInOrderAndTheMatricesGetTheirImportance() {
        ImportanceMatrix imatrix = ImportanceMatrix.read(ImportanceMatrixTest.resource("q-tied-imatrix.gguf"));
        Path out = dir.resolve("out.gguf");
        StringWriter log = new StringWriter();
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"))) {
            Map<String, Tensor> tensors = tensors(source);
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.Q4_K_M, GgufConfigReader.read(source),
                    List.copyOf(tensors.values()), true);
            QuantizationRun.prepare(plan, tensors, quantizers(), imatrix)
                    .write(out, QuantizationMetadata.fromGguf(source, QuantizationType.Q4_K_M), 4, logged(plan, log));
            try (GgufFile written = GgufFile.open(out)) {
                assertEquals(plan.tensors().stream().map(QuantizationPlan.Entry::toString).toList(),
                        written.tensors().stream().map(t -> t.name() + " " + t.type()
                                + Arrays.toString(t.shape())).toList());
                float[] row = new float[256 * 3];
                for (GgufTensor tensor : written.tensors()) {
                    GgufTensor original = source.tensor(tensor.name()).orElseThrow();
                    if (tensor.type() == DType.F32) {
                        float[] expected = new float[(int) original.columns()];
                        ReferenceDequantizer.decode(original.type(), original.data(), expected);
                        float[] actual = new float[expected.length];
                        ReferenceDequantizer.decode(DType.F32, tensor.data(), actual);
                        assertArrayEquals(expected, actual, tensor.name());
                        continue;
                    }
                    for (long r = 0; r < tensor.rows(); r++) {
                        float[] weights = Arrays.copyOf(row, (int) original.columns());
                        ReferenceDequantizer.decode(original.type(), original.row(r), weights);
                        assertEquals(Float.floatToRawIntBits(weights[0]), tensor.row(r).get(I32, 0),
                                tensor.name() + " row " + r);
                    }
                }
                assertEquals(2, written.metadata().nonNegativeInt("general.quantization_version"));
                assertEquals(15, written.metadata().nonNegativeInt("general.file_type"));
            }
        }
        // the embedding has no entry (llama-imatrix skips it); each layer matrix's importance is the file's mean
        assertTrue(importanceSeen.containsKey("Q6_K 256 none"), importanceSeen.keySet().toString());
        float[] down = importanceSeen.get("Q6_K 768 768"); // blk.1.ffn_down, in Q6_K
        assertArrayEquals(imatrix.importance("blk.1.ffn_down.weight").orElseThrow(), down);
        assertTrue(importanceSeen.containsKey("Q4_K 512 512"), "attn_output, 512 columns");
        assertTrue(log.toString().lines().toList().getLast().startsWith("fs: wrote " + out + ": 24 tensors"),
                log.toString());
    }

    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * Q8_0 as ggml's quantize_row_q8_0_ref computes it (d = max|x| / 127 per block of 32, q = x / d rounded half away
     * from zero), for this test only: the real quantizers are another piece of work.
     */
    private static final RowQuantizer Q8_0 = (weights, rows, columns, importance, out, outOffset) -> {
        for (int b = 0; b < rows * columns / 32; b++) {
            float max = 0;
            for (int j = 0; j < 32; j++) max = Math.max(max, Math.abs(weights[b * 32 + j]));
            float d = max / 127;
            float inverse = d != 0 ? 1 / d : 0;
            long at = outOffset + 34L * b;
            out.set(HALF, at, Float.floatToFloat16(d));
            for (int j = 0; j < 32; j++) {
                float x = weights[b * 32 + j] * inverse;
                out.set(ValueLayout.JAVA_BYTE, at + 2 + j, (byte) (x >= 0 ? Math.floor(x + 0.5) : Math.ceil(x - 0.5)));
            }
        }
    };

    /**
     * With a Q8_0 quantizer the whole file is llama-quantize's Q8_0 file of the same weights, byte for byte: header,
     * metadata and its order, tensor order, offsets, padding and data.
     */
    @Test
    void q8_0IsLlamaQuantizesFileByteForByte() throws IOException {
        Path out = dir.resolve("q8.gguf");
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"))) {
            Map<String, Tensor> tensors = tensors(source);
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.Q8_0, GgufConfigReader.read(source),
                    List.copyOf(tensors.values()), false);
            QuantizationRun.prepare(plan, tensors, type -> type == DType.Q8_0 ? Q8_0 : RowQuantizers.of(DType.F32), null)
                    .write(out, QuantizationMetadata.fromGguf(source, QuantizationType.Q8_0), 3,
                            logged(plan, new StringWriter()));
        }
        assertArrayEquals(Files.readAllBytes(QTied.gguf("Q8_0")), Files.readAllBytes(out));
    }

    /** On a terminal the bar is redrawn in place and ends complete: all tensors, all bytes. */
    @Test
    void theProgressBarEndsAtEveryTensorAndByte() {
        StringWriter log = new StringWriter();
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"))) {
            Map<String, Tensor> tensors = tensors(source);
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.F16, GgufConfigReader.read(source),
                    List.copyOf(tensors.values()), false);
            QuantizationRun.prepare(plan, tensors, quantizers(), null).write(dir.resolve("f16.gguf"),
                    QuantizationMetadata.fromGguf(source, QuantizationType.F16), 2,
                    new QuantizationProgress(new PrintWriter(log), true, plan));
            String[] redraws = log.toString().split("\r");
            String last = redraws[redraws.length - 1];
            assertTrue(last.startsWith("[24/24] 100% [########################] "
                    + fs.HumanSize.of(plan.bytes()) + " / " + fs.HumanSize.of(plan.bytes())), last);
            assertTrue(last.contains("\u001b[K" + System.lineSeparator() + "fs: wrote "), last);
        }
    }

    @Test
    void aFailureLeavesNoFile() throws IOException {
        Path out = dir.resolve("out.gguf");
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"))) {
            Map<String, Tensor> tensors = tensors(source);
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.Q8_0, GgufConfigReader.read(source),
                    List.copyOf(tensors.values()), false);
            RowQuantizer failing = (weights, rows, columns, importance, o, offset) -> {
                throw new FsException("disk on fire");
            };
            FsException e = assertThrows(FsException.class, () -> QuantizationRun.prepare(plan, tensors,
                    type -> type == DType.F32 ? RowQuantizers.of(DType.F32) : failing, null)
                    .write(out, QuantizationMetadata.fromGguf(source, QuantizationType.Q8_0), 3,
                            logged(plan, new StringWriter())));
            assertEquals("disk on fire", e.getMessage());
        }
        assertFalse(Files.exists(out));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        }
    }

    @Test
    void whatCannotBeQuantizedIsRefusedBeforeAnythingIsWritten() {
        Path out = dir.resolve("out.gguf");
        try (GgufFile q8 = GgufFile.open(QTied.gguf("Q8_0"))) {
            Map<String, Tensor> tensors = tensors(q8);
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.BF16, GgufConfigReader.read(q8),
                    List.copyOf(tensors.values()), false);
            String message = assertThrows(FsException.class, () -> QuantizationRun.prepare(plan, tensors, quantizers(), null)).getMessage();
            assertTrue(message.contains("is stored as Q8_0") && message.contains("does not requantize"), message);
        }
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"))) {
            Map<String, Tensor> tensors = tensors(source);
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.IQ2_XXS, GgufConfigReader.read(source),
                    List.copyOf(tensors.values()), false);
            String message = assertThrows(FsException.class, () -> QuantizationRun.prepare(plan, tensors, quantizers(), null)).getMessage();
            assertTrue(message.contains("needs an importance matrix"), message);
            ImportanceMatrix trained = ImportanceMatrix.read(ImportanceMatrixTest.resource("trained-imatrix.gguf"));
            message = assertThrows(FsException.class, () -> QuantizationRun.prepare(plan, tensors, quantizers(), trained)).getMessage();
            assertTrue(message.contains("made for another model"), message); // trained's attn_output is 256 wide
        }
        assertFalse(Files.exists(out));
    }
}
