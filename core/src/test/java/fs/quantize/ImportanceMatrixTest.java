package fs.quantize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.GgufValueType;
import fs.gguf.GgufWriter;
import fs.gguf.QTied;
import fs.tensor.DType;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Against llama-imatrix's own files: ../shared/trained/imatrix.gguf (72 windows of 128 tokens over the trained
 * checkpoint, 4 layers) and ../shared/gguf/q-tied/imatrix.gguf (the one llama-quantize made q-tied's IQ2_XXS file
 * with), copied into the test resources.
 */
class ImportanceMatrixTest {
    @TempDir
    Path dir;

    static Path resource(String name) {
        try {
            return Path.of(ImportanceMatrixTest.class.getResource("/fs/quantize/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void readsLlamaImatrixsFile() {
        ImportanceMatrix matrix = ImportanceMatrix.read(resource("trained-imatrix.gguf"));
        assertEquals(List.of("imatrix-text.txt"), matrix.datasets());
        assertEquals(72, matrix.chunkCount());
        assertEquals(128, matrix.chunkSize());
        assertEquals(28, matrix.tensors().size()); // 7 matrices × 4 layers: no embedding, no output
        assertEquals("blk.0.attn_k.weight", matrix.tensors().firstKey());
        ImportanceMatrix.Sums k = matrix.tensors().get("blk.0.attn_k.weight");
        assertEquals(9216, k.count()); // 72 × 128 tokens
        assertEquals(256, k.sumOfSquares().length);
        // the values as llama.cpp's gguf-py reads them
        assertEquals(7781.628f, k.sumOfSquares()[0], 1e-3f);
        assertEquals(9545.584f, k.sumOfSquares()[1], 1e-3f);
        ImportanceMatrix.Sums down = matrix.tensors().get("blk.3.ffn_down.weight");
        assertEquals(768, down.sumOfSquares().length);
        assertEquals(6411.3486f, down.sumOfSquares()[2], 1e-3f);
        float[] importance = matrix.importance("blk.3.ffn_down.weight").orElseThrow();
        assertEquals(6411.3486f / 9216, importance[2], 1e-6f);
        assertTrue(matrix.importance("token_embd.weight").isEmpty());
    }

    /** What fs writes is llama-imatrix's file to the byte: same keys, types, tensors, order and alignment. */
    @Test
    void writesBackLlamasFileByteForByte() throws IOException {
        for (String name : List.of("trained-imatrix.gguf", "q-tied-imatrix.gguf")) {
            ImportanceMatrix matrix = ImportanceMatrix.read(resource(name));
            Path written = dir.resolve(name);
            matrix.write(written);
            assertEquals(matrix, ImportanceMatrix.read(written));
            assertArrayEquals(Files.readAllBytes(resource(name)), Files.readAllBytes(written), name);
        }
    }

    @Test
    void aMatrixWithoutCountsReadsAsAllOnes() {
        ImportanceMatrix matrix = new ImportanceMatrix(
                new TreeMap<>(Map.of("a", new ImportanceMatrix.Sums(new float[] {4, 8}, 0))), List.of(), 0, 512);
        assertArrayEquals(new float[] {1, 1}, matrix.importance("a").orElseThrow());
    }

    private static byte[] f32(float... values) {
        ByteBuffer buffer = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) buffer.putFloat(v);
        return buffer.array();
    }

    private GgufWriter imatrixHeader() {
        return new GgufWriter().string("general.type", "imatrix")
                .array("imatrix.datasets", GgufValueType.STRING, "t.txt")
                .u32("imatrix.chunk_count", 1).u32("imatrix.chunk_size", 4);
    }

    private String error(GgufWriter writer) {
        Path file = writer.write(dir.resolve("bad.gguf"));
        return assertThrows(FsException.class, () -> ImportanceMatrix.read(file)).getMessage();
    }

    @Test
    void whatIsNotADenseImportanceMatrixIsRefusedInOneLine() {
        assertTrue(error(new GgufWriter().string("general.type", "model").string("general.architecture", "qwen3"))
                .contains("is model, not 'imatrix'"));
        String model = assertThrows(FsException.class, () -> ImportanceMatrix.read(QTied.gguf("Q8_0"))).getMessage();
        assertTrue(model.contains("'imatrix.datasets' is missing"), model);
        assertTrue(error(imatrixHeader()).contains("no NAME.in_sum2 tensors"));
        assertTrue(error(imatrixHeader().tensor("a.in_sum2", DType.F32, new long[] {2}, f32(1, 2)))
                .contains("a.in_sum2 has no a.counts"));
        assertTrue(error(imatrixHeader().tensor("a.in_sum2", DType.F32, new long[] {2}, f32(1, 2))
                .tensor("a.counts", DType.F32, new long[] {3}, f32(3, 3, 3))).contains("one per expert"));
        assertTrue(error(imatrixHeader().tensor("a.in_sum2", DType.F32, new long[] {2}, f32(1, Float.NaN))
                .tensor("a.counts", DType.F32, new long[] {1}, f32(3))).contains("not a sum of squares"));
        assertTrue(error(imatrixHeader().tensor("a.in_sum2", DType.F16, new long[] {2}, new byte[4])
                .tensor("a.counts", DType.F32, new long[] {1}, f32(3))).contains("is F16"));
        for (String message : List.of(error(imatrixHeader().string("x", "y")))) {
            assertTrue(message.startsWith(dir.resolve("bad.gguf").toString()), message);
            assertTrue(!message.contains("\n"));
        }
    }

    @Test
    void theTensorsOfAWrittenFileAreNameSortedPairs() {
        TreeMap<String, ImportanceMatrix.Sums> sums = new TreeMap<>();
        sums.put("blk.1.ffn_down.weight", new ImportanceMatrix.Sums(new float[] {1, 2, 3}, 7));
        sums.put("blk.0.attn_q.weight", new ImportanceMatrix.Sums(new float[] {5}, 7));
        Path file = dir.resolve("m.gguf");
        new ImportanceMatrix(sums, List.of("a.txt", "b.txt"), 3, 64).write(file);
        try (GgufFile gguf = GgufFile.open(file)) {
            assertEquals(List.of("blk.0.attn_q.weight.in_sum2", "blk.0.attn_q.weight.counts",
                    "blk.1.ffn_down.weight.in_sum2", "blk.1.ffn_down.weight.counts"),
                    gguf.tensors().stream().map(GgufTensor::name).toList());
            assertEquals(List.of("general.type", "imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size"),
                    List.copyOf(gguf.metadata().values().keySet()));
            assertEquals(GgufValueType.UINT32, gguf.metadata().get("imatrix.chunk_size").orElseThrow().type());
        }
        ImportanceMatrix back = ImportanceMatrix.read(file);
        assertEquals(List.of("a.txt", "b.txt"), back.datasets());
        assertEquals(7, back.tensors().get("blk.1.ffn_down.weight").count());
    }
}
