package fs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.quantize.ImportanceMatrix;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fs imatrix on a mixture of experts (models/q-moe: 2 layers, 8 experts, top 3): llama-imatrix's layout (the router
 * as a dense matrix, each expert stack per expert), and each stack's per-expert counts add up to tokens × 3.
 */
class MoeImatrixCommandTest {
    private static final Path Q_MOE = Path.of(System.getProperty("fs.repo"), "models", "q-moe");
    private static final String TEXT = "The quick brown fox jumps over the lazy dog; def main(argv): return 0\n";

    @TempDir
    Path dir;

    @Test
    void expertStacksGetPerExpertSumsAndCounts() throws IOException {
        Path text = Files.writeString(dir.resolve("text.txt"), TEXT.repeat(4));
        Path out = dir.resolve("imatrix.gguf");
        CliRun run = CliRun.of("imatrix", Q_MOE.resolve("model-BF16.gguf").toString(), "-f", text.toString(), "-c",
                "16", "-o", out.toString(), "-t", "2", "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        ImportanceMatrix ours = ImportanceMatrix.read(out);
        long tokens = 16L * ours.chunkCount();
        assertTrue(ours.chunkCount() >= 3, run.err());

        ImportanceMatrix llama = ImportanceMatrix.read(Q_MOE.resolve("imatrix.gguf")); // llama-imatrix's
        assertEquals(llama.tensors().keySet(), ours.tensors().keySet());
        for (var entry : ours.tensors().entrySet()) {
            String name = entry.getKey();
            ImportanceMatrix.Sums sums = entry.getValue();
            ImportanceMatrix.Sums theirs = llama.tensors().get(name);
            assertEquals(theirs.matrices(), sums.matrices(), name);
            assertEquals(theirs.columns(), sums.columns(), name);
            if (name.contains("_exps.")) {
                assertEquals(8, sums.matrices(), name);
                assertEquals(tokens * 3, sums.count(), name); // every token ran 3 experts
            } else {
                assertEquals(tokens, sums.count(), name);
            }
        }
        for (int l = 0; l < 2; l++) {
            long[] down = ours.tensors().get("blk." + l + ".ffn_down_exps.weight").counts();
            assertArrayEquals(down, ours.tensors().get("blk." + l + ".ffn_gate_exps.weight").counts());
            assertArrayEquals(down, ours.tensors().get("blk." + l + ".ffn_up_exps.weight").counts());
            for (long count : down) assertTrue(count <= tokens, "an expert runs at most once per token");
        }
        // the gate and up experts see the same input (ffn_norm's rows of the tokens that chose them)
        assertArrayEquals(ours.tensors().get("blk.0.ffn_gate_exps.weight").sumOfSquares(),
                ours.tensors().get("blk.0.ffn_up_exps.weight").sumOfSquares());

        // and fs quantize takes it where an importance matrix is required
        Path quantized = dir.resolve("iq2.gguf");
        CliRun quantize = CliRun.of("quantize", Q_MOE.resolve("model-BF16.gguf").toString(), "-o",
                quantized.toString(), "--type", "IQ2_XXS", "--imatrix", out.toString(), "-t", "2");
        assertEquals(0, quantize.exitCode(), quantize.err());

        CliRun inspect = CliRun.of("inspect", out.toString());
        assertEquals(0, inspect.exitCode(), inspect.err());
        assertTrue(inspect.out().contains("ROWS PER EXPERT"), inspect.out());
    }
}
