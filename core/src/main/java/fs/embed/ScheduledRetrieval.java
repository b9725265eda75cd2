package fs.embed;

import fs.FsException;
import fs.engine.Engine;
import fs.engine.LoadedModel;
import fs.generate.Scheduler;
import fs.model.Pooling;
import fs.tokenizer.Tokenizer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * Embedding and reranking on a loaded model whose backend a {@link Scheduler} owns: the forwards run on the
 * scheduler's thread between the chats' steps ({@link Scheduler#runBetweenSteps}), {@link #SLOTS} inputs at once in a
 * KV cache of their own, allocated at the first call. What the caller gave is checked on the caller's thread first
 * ({@link #fitted}, {@link #prompts}), so that a bad input never waits for the model. What fs.api's FsModel and fs
 * serve share. Thread-safe: the runs of several callers take turns on the scheduler's thread.
 */
public final class ScheduledRetrieval {
    /** Inputs of one embed or rerank call that run at once, each in a slot of the cache of their own. */
    public static final int SLOTS = 4;

    private final LoadedModel<Scheduler> loaded;
    private final String name;
    private final Pooling pooling;
    private final Embeddings embeddings;
    private final Reranker reranker; // null: the vocabulary has no "yes" and "no" to score with
    /** The cache and buffers of the runs, allocated at the first: scheduler thread only. */
    private SequenceBatcher batcher;

    /**
     * Over {@code loaded}, whose scheduler's thread will run the forwards (it does not close it), with the model's
     * {@code tokenizer} (read once by the caller: reading it again takes long).
     */
    public ScheduledRetrieval(LoadedModel<Scheduler> loaded, Tokenizer tokenizer) {
        this.loaded = loaded;
        this.name = loaded.source().path().toString();
        this.pooling = loaded.source().pooling();
        this.embeddings = new Embeddings(tokenizer, loaded.source().appendedToken(tokenizer));
        this.reranker = tokenizer.tokenId("yes").isPresent() && tokenizer.tokenId("no").isPresent()
                ? new Reranker(tokenizer) : null;
    }

    /** Refuses, in one line, a model that is not an embedding model ({@link Embeddings#check}). */
    private void checkEmbeds() {
        Embeddings.check(name, pooling);
    }

    /** Refuses, in one line, a model that cannot score ({@link Reranker#check}, or no "yes" and "no" tokens). */
    public void checkReranks() {
        Reranker.check(name, pooling, loaded.model().hasOutputProjection());
        if (reranker == null) throw new FsException("the model's vocabulary has no \"yes\" and \"no\" to score with");
    }

    /** The embedding's length before {@link Embeddings.Options#dimensions} cuts it: the model's hidden size. */
    public int hiddenSize() {
        return loaded.config().hiddenSize();
    }

    /** The most tokens an input (or a rerank prompt) may have: the context a chat has. */
    public int contextLength() {
        return loaded.state().config().contextLength();
    }

    /** A text's tokens as the model embeds them: with the token its tokenizer appends, if any. */
    public int[] tokens(String text) {
        return embeddings.tokens(text);
    }

    /**
     * The inputs, token ids, as they run: checked (a model that is not an embedding model, no input, an empty one,
     * one longer than {@link #contextLength} unless {@code truncate}, an id outside the vocabulary: each an
     * FsException, naming the input by its index) and truncated when asked ({@link Embeddings#fitted}).
     */
    public int[][] fitted(List<int[]> inputs, boolean truncate) {
        checkEmbeds();
        int[][] fitted = embeddings.fitted(inputs, contextLength(), truncate);
        int vocab = loaded.config().vocabSize();
        for (int i = 0; i < fitted.length; i++) {
            for (int id : fitted[i]) {
                if (id < 0 || id >= vocab) {
                    throw new FsException("input " + i + ": token id " + id + " is outside the vocabulary (0.."
                            + (vocab - 1) + ")");
                }
            }
        }
        return fitted;
    }

    /**
     * One vector per input of {@link #fitted}, in order, run on the scheduler's thread.
     *
     * @throws FsException           for dimensions beyond {@link #hiddenSize}
     * @throws IllegalStateException when the scheduler is closed (before or while it waits)
     */
    public List<float[]> embed(int[][] fitted, Embeddings.Options options) {
        return onSchedulerThread(() -> embeddings.embed(batcher(), List.of(fitted), options));
    }

    /**
     * Each document's prompt in the reranker's form ({@link Reranker#prompts}), checked: {@link #checkReranks}, an
     * empty query, no document or an empty one, a prompt longer than {@link #contextLength} unless {@code truncate}
     * (each an FsException naming the document by its index).
     */
    public int[][] prompts(String instruction, String query, List<String> documents, boolean truncate) {
        checkReranks();
        for (int i = 0; i < documents.size(); i++) {
            if (documents.get(i).isEmpty()) throw new FsException("document " + i + " is empty");
        }
        return reranker.prompts(instruction, query, documents, contextLength(), truncate);
    }

    /**
     * P("yes") of each prompt of {@link #prompts}, in order, run on the scheduler's thread; {@link Reranker#ranked}
     * sorts them.
     *
     * @throws IllegalStateException when the scheduler is closed (before or while it waits)
     */
    public double[] scores(int[][] prompts) {
        return onSchedulerThread(() -> reranker.scores(batcher(), prompts));
    }

    /**
     * The batcher: {@link #SLOTS} inputs at once, each up to the context a chat has, allocated on the model's backend
     * at the first call (scheduler thread only).
     */
    private SequenceBatcher batcher() {
        if (batcher == null) {
            batcher = new SequenceBatcher(loaded.model(), SLOTS, contextLength(), Engine.PREFILL_CHUNK,
                    loaded.cacheTypes());
        }
        return batcher;
    }

    /** Runs {@code work} on the scheduler's thread, which owns the backend, and waits for it. */
    private <T> T onSchedulerThread(Supplier<T> work) {
        CompletableFuture<T> result = loaded.state().runBetweenSteps(work);
        try {
            return result.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) throw cause;
            if (e.getCause() instanceof Error cause) throw cause;
            throw e;
        }
    }
}
