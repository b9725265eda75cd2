package fs.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.format.ReferenceDequantizer;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.quantize.ImportanceMatrix;
import fs.source.ModelSource;
import fs.tensor.DType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImatrixCommandTest {
    private static final String BF16 = QTied.gguf("BF16").toString();
    private static final String TEXT = "The quick brown fox jumps over the lazy dog; def main(argv): return 0\n";

    @TempDir
    Path dir;

    /**
     * q-tied over five windows of 16 tokens: llama-imatrix's layout (the matrices of both layers, no embedding, no
     * output) and llama-imatrix's figures on the same text, and layer 0's q/k/v sums computed here from the weights
     * alone: their input is rmsnorm(embedding) · gamma, no forward pass needed.
     */
    @Test
    void sumsTheSquaredInputsOfEveryLayerMatrix() throws IOException {
        Path text = Files.writeString(dir.resolve("text.txt"), TEXT.repeat(4));
        Path out = dir.resolve("imatrix.gguf");
        CliRun run = CliRun.of("imatrix", BF16, "-f", text.toString(), "-c", "16", "-o", out.toString(), "-t", "2",
                "--backend", "cpu");
        assertEquals(0, run.exitCode(), run.err());
        int[] tokens;
        try (ModelSource source = ModelSource.open(QTied.gguf("BF16"))) {
            tokens = source.tokenizer().encode(TEXT.repeat(4));
        }
        int windows = tokens.length / 16;
        assertTrue(windows >= 3, "the text gives " + tokens.length + " tokens");
        assertTrue(run.err().contains("fs: wrote " + out + ": 14 matrices over " + windows + " windows of 16 tokens"),
                run.err());
        // stderr is no terminal here: a plain line per window (a run of ten or fewer), as fs perplexity prints them
        assertFalse(run.err().contains("\r"), run.err());
        for (int w = 1; w <= windows; w++) {
            assertTrue(run.err().contains(System.lineSeparator() + "imatrix: " + w + "/" + windows + " windows ["),
                    w + " in " + run.err());
        }

        ImportanceMatrix matrix = ImportanceMatrix.read(out);
        assertEquals(List.of(text.toString()), matrix.datasets());
        assertEquals(windows, matrix.chunkCount());
        assertEquals(16, matrix.chunkSize());
        for (var entry : matrix.tensors().entrySet()) assertEquals(16L * windows, entry.getValue().count());

        // llama-imatrix's own file of the same text and windows (made with -c 16 -b 16 -ub 16): the same counts, and
        // the same sums but for llama.cpp's rounding of activations to bf16 inside its matmuls (0.5 % in L2)
        ImportanceMatrix same = ImportanceMatrix.read(Path.of(System.getProperty("fs.repo"),
                "core/src/test/resources/fs/quantize/q-tied-llama-imatrix-c16.gguf"));
        assertEquals(same.chunkCount(), matrix.chunkCount());
        assertEquals(same.chunkSize(), matrix.chunkSize());
        assertEquals(same.tensors().keySet(), matrix.tensors().keySet());
        for (var entry : matrix.tensors().entrySet()) {
            ImportanceMatrix.Sums theirs = same.tensors().get(entry.getKey());
            assertEquals(theirs.count(), entry.getValue().count(), entry.getKey());
            float[] ours = entry.getValue().sumOfSquares();
            assertEquals(theirs.sumOfSquares().length, ours.length, entry.getKey());
            double error = 0, norm = 0;
            for (int c = 0; c < ours.length; c++) {
                double d = ours[c] - theirs.sumOfSquares()[c];
                error += d * d;
                norm += (double) theirs.sumOfSquares()[c] * theirs.sumOfSquares()[c];
            }
            double bound = entry.getKey().startsWith("blk.0.attn_") && !entry.getKey().contains("output") ? 1e-5 : 1e-2;
            assertTrue(Math.sqrt(error / norm) < bound, entry.getKey() + ": relative L2 " + Math.sqrt(error / norm));
        }

        double[] expected = new double[256];
        try (GgufFile file = GgufFile.open(QTied.gguf("BF16"))) {
            GgufTensor embedding = file.tensor("token_embd.weight").orElseThrow();
            float[] gamma = new float[256];
            ReferenceDequantizer.decode(DType.F32, file.tensor("blk.0.attn_norm.weight").orElseThrow().data(), gamma);
            float[] x = new float[256];
            for (int t = 0; t < 16 * windows; t++) {
                ReferenceDequantizer.decode(embedding.type(), embedding.row(tokens[t]), x);
                double squares = 0;
                for (float v : x) squares += (double) v * v;
                double scale = 1 / Math.sqrt(squares / 256 + 1e-6);
                for (int c = 0; c < 256; c++) {
                    double y = x[c] * scale * gamma[c];
                    expected[c] += y * y;
                }
            }
        }
        float[] q = matrix.tensors().get("blk.0.attn_q.weight").sumOfSquares();
        for (int c = 0; c < 256; c++) assertEquals(expected[c], q[c], 1e-4 * expected[c], "column " + c);
        assertArrayEquals(q, matrix.tensors().get("blk.0.attn_k.weight").sumOfSquares());
        assertArrayEquals(q, matrix.tensors().get("blk.0.attn_v.weight").sumOfSquares());
        assertFalse(Arrays.equals(q, matrix.tensors().get("blk.1.attn_q.weight").sumOfSquares()));
    }

    @Test
    void aTextShorterThanAWindowIsOneLine() throws IOException {
        Path text = Files.writeString(dir.resolve("short.txt"), "too short");
        Path out = dir.resolve("imatrix.gguf");
        CliRun run = CliRun.of("imatrix", BF16, "-f", text.toString(), "-o", out.toString(), "--backend", "cpu");
        assertEquals(1, run.exitCode());
        assertTrue(run.err().contains("fewer than one window of -c 512"), run.err());
        assertFalse(Files.exists(out));
        CliRun missing = CliRun.of("imatrix", BF16, "-f", dir.resolve("none.txt").toString(), "--backend", "cpu");
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("none.txt: no such file"), missing.err());
    }
}
