package fs.embed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.Backend;
import fs.backend.KvCacheTypes;
import fs.model.DecoderModel;
import fs.model.Golden;
import fs.model.ModelTensors;
import fs.model.ModelWeights;
import fs.model.Pooling;
import fs.source.CheckpointGguf;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Embeddings and rerank scores of the tiny Qwen3-Embedding and Qwen3-Reranker checkpoints (and their held-out pair)
 * against the float64 reference, loaded as fs loads them (a bare checkpoint without lm_head, the tokenizer's appended
 * token; and the GGUF file of each, with llama.cpp's pooling_type and add_eos_token), batched several sequences to a
 * forward and one by one. A backend's test extends this class.
 */
public abstract class EmbeddingGoldenTest {
    static final List<String> EMBEDDING_CHECKPOINTS = EmbeddingGolden.EMBEDDING_CHECKPOINTS;
    static final List<String> RERANK_CHECKPOINTS = EmbeddingGolden.RERANK_CHECKPOINTS;
    /** The logit goldens' tolerance, for each entry of a vector, each logit and each probability. */
    static final double REFERENCE_TOLERANCE = 1e-3;
    static final double MIN_COSINE = 0.99999;

    /** A fresh backend; the test closes it. */
    protected abstract Backend createBackend();

    /**
     * Batched and alone, for a unit vector's entries and a probability: rounding, far below the golden's 1e-3. Not
     * bit for bit with bf16 weights: a forward of 2..8 rows takes the CPU matmul's few-rows path and a longer one the
     * panel path (MatmulTask.FEW_ROWS), which sum in different orders, as OpenCL's one-row and tiled kernels do; so
     * the same sequence alone (8 rows) and beside another (16) differs in the last bits from the first down_proj on.
     */
    static final double BATCHING_TOLERANCE = 1e-5;

    /** A model on a fresh backend, and the loader's source, closed together. */
    private record Loaded(ModelSource source, Backend backend, DecoderModel model) implements AutoCloseable {
        static Loaded of(Path model, Backend backend) {
            ModelSource source = ModelSource.open(model);
            return new Loaded(source, backend,
                    new DecoderModel(source.config(), ModelWeights.bind(source.config(), source.tensors()), backend));
        }

        /** A batcher of {@code slots} slots and forwards of {@code batchRows} rows. */
        SequenceBatcher batcher(int slots, int batchRows) {
            return new SequenceBatcher(model, slots, 128, batchRows, KvCacheTypes.F32);
        }

        @Override
        public void close() {
            try {
                backend.close();
            } finally {
                source.close();
            }
        }
    }

    @TempDir
    Path temp;

    /** The checkpoint as it is, and as the GGUF file llama.cpp's converter makes of it. */
    private List<Path> asCheckpointAndGguf(Path checkpoint) {
        return List.of(checkpoint, CheckpointGguf.write(checkpoint, temp.resolve(checkpoint.getFileName() + ".gguf")));
    }

    @ParameterizedTest
    @FieldSource("EMBEDDING_CHECKPOINTS")
    void embeddingsMatchTheReferenceBatchedAndOneByOne(String checkpoint) throws IOException {
        EmbeddingGolden golden = EmbeddingGolden.load(checkpoint);
        for (Path model : asCheckpointAndGguf(golden.modelDir())) embeddings(golden, model);
    }

    private void embeddings(EmbeddingGolden golden, Path model) {
        String checkpoint = model.getFileName().toString();
        try (Loaded loaded = Loaded.of(model, createBackend())) {
            assertEquals(Pooling.LAST, loaded.source().pooling(), checkpoint);
            Tokenizer tokenizer = loaded.source().tokenizer();
            // 3 slots, forwards of 16 rows: sequences split over forwards, several share one, slots are reused
            SequenceBatcher batched = loaded.batcher(3, 16);
            SequenceBatcher alone = loaded.batcher(1, 128);
            Embeddings embeddings = new Embeddings(tokenizer, loaded.source().appendedToken(tokenizer));
            List<int[]> inputs = new ArrayList<>();
            for (EmbeddingGolden.Text text : golden.texts()) {
                assertArrayEquals(text.ids(), embeddings.tokens(text.text()), checkpoint + ": ids of " + text.text());
                inputs.add(text.ids());
            }
            List<float[]> vectors = embeddings.embed(batched, inputs, Embeddings.Options.DEFAULT);
            List<float[]> truncated = embeddings.embed(batched, inputs,
                    new Embeddings.Options(golden.dimensions(), true, false));
            for (int i = 0; i < inputs.size(); i++) {
                EmbeddingGolden.Text text = golden.texts().get(i);
                String where = checkpoint + " text " + i;
                assertClose(text.vector(), vectors.get(i), where);
                assertClose(text.truncated(), truncated.get(i), where + " truncated to " + golden.dimensions());
                float[] single = embeddings.embed(alone, List.of(inputs.get(i)), Embeddings.Options.DEFAULT).getFirst();
                assertArrayEquals(single, vectors.get(i), (float) BATCHING_TOLERANCE, where + ": batched vs alone");
            }
        }
    }

    /**
     * The checkpoint, its GGUF as a causal LM and as llama.cpp's reranker GGUF (pooling rank, the "yes" and "no" rows
     * as a classifier head): each as the reference, the reranker GGUF as the checkpoint to rounding.
     */
    @ParameterizedTest
    @FieldSource("RERANK_CHECKPOINTS")
    void rerankScoresMatchTheReferenceBatchedAndOneByOne(String checkpoint) throws IOException {
        EmbeddingGolden golden = EmbeddingGolden.load(checkpoint);
        List<double[]> scores = new ArrayList<>();
        for (Path model : asCheckpointAndGguf(golden.modelDir())) scores.add(rerank(golden, model, Pooling.NONE));
        Path reranker = CheckpointGguf.writeReranker(golden.modelDir(), temp.resolve(checkpoint + "-rank.gguf"), 2);
        double[] ranked = rerank(golden, reranker, Pooling.RANK);
        assertArrayEquals(scores.getFirst(), ranked, BATCHING_TOLERANCE, "the reranker GGUF as the checkpoint");
    }

    /**
     * An untied reranker (tiny-untied, a causal LM with its own lm_head, scored as one): llama.cpp's converter takes the
     * head's rows from lm_head and writes no output.weight; its GGUF scores the held-out reranker's prompts as the
     * checkpoint does.
     */
    @Test
    void anUntiedRerankersGgufScoresAsItsCheckpoint() throws IOException {
        Path checkpoint = Golden.modelDir("tiny-untied");
        Path gguf = CheckpointGguf.writeReranker(checkpoint, temp.resolve("tiny-untied-rank.gguf"), 2);
        int[][] prompts = EmbeddingGolden.load("tiny-rerank-heldout").pairs().stream().map(EmbeddingGolden.Pair::ids)
                .toArray(int[][]::new);
        List<double[]> scores = new ArrayList<>();
        for (Path model : List.of(checkpoint, gguf)) {
            try (Loaded loaded = Loaded.of(model, createBackend())) {
                ModelTensors tensors = loaded.source().tensors();
                assertEquals(model == checkpoint, tensors.find(tensors.names().output()).isPresent(), "the lm_head");
                scores.add(new Reranker(loaded.source().tokenizer()).scores(loaded.batcher(3, 64), prompts));
            }
        }
        assertArrayEquals(scores.getFirst(), scores.getLast(), BATCHING_TOLERANCE);
    }

    /** The scores of the golden's pairs, batched, after checking them against the golden and alone. */
    private double[] rerank(EmbeddingGolden golden, Path model, Pooling pooling) {
        String checkpoint = model.getFileName().toString();
        try (Loaded loaded = Loaded.of(model, createBackend())) {
            assertEquals(pooling, loaded.source().pooling(), checkpoint);
            assertEquals(pooling == Pooling.RANK, loaded.model().hasRerankHead(), checkpoint);
            Reranker reranker = new Reranker(loaded.source().tokenizer());
            SequenceBatcher batched = loaded.batcher(3, 64);
            SequenceBatcher alone = loaded.batcher(1, 128);
            int[][] prompts = new int[golden.pairs().size()][];
            for (int i = 0; i < prompts.length; i++) {
                EmbeddingGolden.Pair pair = golden.pairs().get(i);
                prompts[i] = reranker.tokens(pair.instruction(), pair.query(), pair.document(), 128, false, i);
                assertArrayEquals(pair.ids(), prompts[i], checkpoint + " pair " + i + ": the card's prompt");
            }
            double[] scores = reranker.scores(batched, prompts);
            for (int i = 0; i < prompts.length; i++) {
                String where = checkpoint + " pair " + i;
                assertEquals(golden.pairs().get(i).yesProbability(), scores[i], REFERENCE_TOLERANCE, where);
                double single = reranker.scores(alone, new int[][] {prompts[i]})[0];
                assertEquals(single, scores[i], BATCHING_TOLERANCE, where + ": batched vs alone");
            }
            return scores;
        }
    }

    private static void assertClose(double[] expected, float[] actual, String where) {
        assertEquals(expected.length, actual.length, where + ": length");
        double dot = 0, norm = 0, normExpected = 0;
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], actual[i], REFERENCE_TOLERANCE, where + ": entry " + i);
            dot += expected[i] * actual[i];
            norm += (double) actual[i] * actual[i];
            normExpected += expected[i] * expected[i];
        }
        double cosine = dot / Math.sqrt(norm * normExpected);
        assertTrue(cosine >= MIN_COSINE, where + ": cosine " + cosine);
    }
}
