package fs.quantize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** llama-imatrix's file of a mixture of experts (models/q-moe/imatrix.gguf): per-expert sums and counts. */
class MoeImportanceMatrixTest {
    @TempDir
    Path dir;

    @Test
    void readsPerExpertCountsAndWritesThemBackInLlamaImatrixsLayout() {
        Path llama = MoeQuantizationPlanTest.qMoe("imatrix.gguf");
        ImportanceMatrix matrix = ImportanceMatrix.read(llama);
        ImportanceMatrix.Sums down = matrix.tensors().get("blk.0.ffn_down_exps.weight");
        assertEquals(8, down.matrices());
        assertEquals(256, down.columns());
        assertEquals(1024L * 3, down.count()); // 8 chunks of 128 tokens, 3 experts each
        ImportanceMatrix.Sums router = matrix.tensors().get("blk.0.ffn_gate_inp.weight");
        assertEquals(1, router.matrices());
        assertEquals(1024, router.count());
        assertArrayEquals(down.counts(), matrix.tensors().get("blk.0.ffn_gate_exps.weight").counts());

        // each expert's columns divided by its own count, as llama-quantize does
        float[] importance = matrix.importance("blk.0.ffn_down_exps.weight").orElseThrow();
        assertEquals(256 * 8, importance.length);
        float[] sums = down.sumOfSquares();
        for (int e = 0; e < 8; e++) {
            assertEquals(sums[e * 256 + 5] / (float) down.counts()[e], importance[e * 256 + 5]);
        }

        Path copy = dir.resolve("copy.gguf");
        matrix.write(copy);
        assertEquals(matrix, ImportanceMatrix.read(copy));
        try (GgufFile theirs = GgufFile.open(llama); GgufFile ours = GgufFile.open(copy)) {
            List<String> expected = theirs.tensors().stream().map(MoeImportanceMatrixTest::describe).toList();
            assertEquals(expected, ours.tensors().stream().map(MoeImportanceMatrixTest::describe).toList());
        }
    }

    private static String describe(GgufTensor tensor) {
        return tensor.name() + " " + tensor.type() + java.util.Arrays.toString(tensor.shape());
    }

    @Test
    void anExpertThatSawNothingWeighsEveryColumnOne() {
        var sums = new TreeMap<String, ImportanceMatrix.Sums>();
        sums.put("blk.0.ffn_up_exps.weight", new ImportanceMatrix.Sums(new float[] {4, 8, 5, 5}, new long[] {2, 0}));
        ImportanceMatrix matrix = new ImportanceMatrix(sums, List.of(), 0, 16);
        assertArrayEquals(new float[] {2, 4, 1, 1}, matrix.importance("blk.0.ffn_up_exps.weight").orElseThrow());
    }
}
