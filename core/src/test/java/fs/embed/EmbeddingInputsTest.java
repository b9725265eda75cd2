package fs.embed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.KvCacheTypes;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.VectorBackend;
import fs.model.Batch;
import fs.model.DecoderModel;
import fs.model.Golden;
import fs.model.ModelWeights;
import fs.model.Pooling;
import fs.model.Probe;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** What is refused, and how inputs are fitted, before and around the forward. */
class EmbeddingInputsTest {
    private static final int ENDOFTEXT = 151643;

    @Test
    void onlyALastTokenPooledModelEmbedsAndOnlyAModelWithLogitsReranks() {
        assertTrue(assertThrows(FsException.class, () -> Embeddings.check("m", Pooling.NONE)).getMessage()
                .startsWith("m is not an embedding model"));
        assertTrue(assertThrows(FsException.class, () -> Embeddings.check("m", Pooling.RANK)).getMessage()
                .contains("is a reranker"));
        Reranker.check("m", Pooling.RANK, true); // llama.cpp's reranker GGUF: its classifier head scores
        assertTrue(assertThrows(FsException.class, () -> Embeddings.check("m", Pooling.MEAN)).getMessage()
                .contains("pools with mean"));
        Embeddings.check("m", Pooling.LAST);
        assertTrue(assertThrows(FsException.class, () -> Reranker.check("m", Pooling.LAST, true)).getMessage()
                .contains("is an embedding model"));
        assertTrue(assertThrows(FsException.class, () -> Reranker.check("m", Pooling.NONE, false)).getMessage()
                .contains("is an embedding model"));
        Reranker.check("m", Pooling.NONE, true);
    }

    @Test
    void aCausalLmHasNoPoolingNorAppendedToken() {
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-tied"))) {
            assertEquals(Pooling.NONE, source.pooling());
            assertEquals(OptionalInt.empty(), source.appendedToken(source.tokenizer()));
        }
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-embed-heldout"))) {
            assertEquals(Pooling.LAST, source.pooling(), "a bare Qwen3Model without 1_Pooling");
            assertEquals(OptionalInt.of(ENDOFTEXT), source.appendedToken(source.tokenizer()));
        }
    }

    @Test
    void aModelWithoutLmHeadRefusesLogitsButComputesHiddenStates() {
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-embed-heldout"));
             VectorBackend backend = new VectorBackend(1, CpuKernels.vectorApi())) {
            assertEquals(false, source.config().tieWordEmbeddings());
            DecoderModel model = new DecoderModel(source.config(), ModelWeights.bind(source.config(),
                    source.tensors()), backend);
            assertEquals(false, model.hasOutputProjection());
            var cache = model.allocateCache(1, 8, KvCacheTypes.F32);
            var buffers = model.allocateBuffers(2, 1);
            Batch batch = Batch.run(0, new int[] {1, 2}, 0, 1);
            FsException e = assertThrows(FsException.class, () -> model.forward(batch, cache, buffers, Probe.NONE));
            assertTrue(e.getMessage().contains("no output projection"), e.getMessage());
            model.hiddenStates(batch, cache, buffers, Probe.NONE);
            float[] hidden = new float[source.config().hiddenSize()];
            buffers.readHidden(0, hidden);
            assertTrue(Float.isFinite(hidden[0]) && hidden[0] != 0, "a final-normed row: " + hidden[0]);
        }
    }

    @Test
    void inputsAreCheckedAndTruncatedKeepingTheAppendedToken() {
        Tokenizer tokenizer = Tokenizer.load(Golden.modelDir("tiny-embed"));
        Embeddings embeddings = new Embeddings(tokenizer, OptionalInt.of(ENDOFTEXT));
        int[] text = embeddings.tokens("The capital of China is Beijing.");
        assertEquals(ENDOFTEXT, text[text.length - 1]);
        assertEquals("no input to embed",
                assertThrows(FsException.class, () -> embeddings.fitted(List.of(), 8, false)).getMessage());
        assertEquals("input 1 is empty", assertThrows(FsException.class,
                () -> embeddings.fitted(List.of(text, new int[0]), 8, false)).getMessage());
        assertTrue(assertThrows(FsException.class, () -> embeddings.fitted(List.of(new int[] {1}, text), 4, false))
                .getMessage().startsWith("input 1 has " + text.length + " tokens, more than the context of 4"));
        int[][] fitted = embeddings.fitted(List.of(text, new int[] {5, 6, 7, 8, 9}), 4, true);
        assertArrayEquals(new int[] {text[0], text[1], text[2], ENDOFTEXT}, fitted[0]);
        assertArrayEquals(new int[] {5, 6, 7, 8}, fitted[1], "ids as given: nothing put back");
    }

    @Test
    void aQueryTakesTheModelCardsFormAndVectorsAreUnitLength() {
        assertEquals("Instruct: Given a web search query, retrieve relevant passages that answer the query\n"
                + "Query:What is fs?", Embeddings.query(Embeddings.DEFAULT_TASK, "What is fs?"));
        float[] vector = {3, 4};
        Embeddings.normalize(vector);
        assertArrayEquals(new float[] {0.6f, 0.8f}, vector);
    }

    @Test
    void aRerankPromptTooLongNamesItsDocumentOrLosesTheDocumentsEnd() {
        Tokenizer tokenizer = Tokenizer.load(Golden.modelDir("tiny-rerank"));
        Reranker reranker = new Reranker(tokenizer);
        int[] whole = reranker.tokens("i", "q", "a long document of many words", 1000, false, 0);
        int context = whole.length - 2;
        assertTrue(assertThrows(FsException.class, () -> reranker.prompts("i", "q",
                List.of("d", "a long document of many words"), context, false)).getMessage()
                .startsWith("document 1 makes a prompt of " + whole.length + " tokens"));
        int[] cut = reranker.tokens("i", "q", "a long document of many words", context, true, 0);
        assertEquals(context, cut.length);
        int[] suffix = tokenizer.encode(Reranker.SUFFIX);
        assertArrayEquals(suffix, Arrays.copyOfRange(cut, cut.length - suffix.length, cut.length), "the suffix stays");
        assertArrayEquals(Arrays.copyOf(whole, context - suffix.length), Arrays.copyOf(cut, context - suffix.length),
                "the prompt up to the document's end stays");
        assertEquals("the query is empty", assertThrows(FsException.class,
                () -> reranker.prompts("i", "", List.of("d"), 100, false)).getMessage());
    }

    @Test
    void scoresRankHighestFirstKeepingIndices() {
        assertEquals(0.5, Reranker.yesProbability(1.5f, 1.5f));
        assertEquals(1 / (1 + Math.exp(-2.0)), Reranker.yesProbability(1f, -1f), 1e-15);
        assertEquals(List.of(new Reranker.Score(1, 0.9), new Reranker.Score(2, 0.5)),
                Reranker.ranked(new double[] {0.1, 0.9, 0.5}, 2));
        assertEquals(3, Reranker.ranked(new double[] {0.1, 0.9, 0.5}, 0).size());
    }
}
