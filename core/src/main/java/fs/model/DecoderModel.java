package fs.model;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.KvCache;
import fs.backend.KvCacheTypes;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A decoder-only transformer loaded on a {@link Backend}: its weights, uploaded once, and the forward pass, exactly as
 * Hugging Face computes it for the model's {@link Architecture}: the embedding, then per layer an attention block and
 * a feed-forward block (dense or a mixture of experts, as the config says for that layer), the final norm and the
 * output projection. Immutable once built, and shared by everything that runs sequences on the model: the KV caches
 * ({@link #allocateCache}) and the buffers of a forward ({@link #allocateBuffers}) belong to whoever runs them, so one
 * loaded model serves one sequence ({@link SingleSequence}) or many (the scheduler) alike. The backend is not
 * thread-safe, so forwards on one model run on one thread at a time.
 */
public final class DecoderModel {

    private record Layer(AttentionBlock attention, FeedForwardBlock feedForward) {}

    private final ModelConfig config;
    private final Backend backend;
    /** Made once from the config: the backends keep their cos/sin tables per rope. */
    private final Rope rope;

    private final Weight embedTokens;
    private final List<Layer> layers;
    private final Weight finalNorm;
    /** Null for a model without an output projection (an embedding model): it computes hidden states only. */
    private final Weight lmHead;
    /** A reranker GGUF's classifier head ({@link ModelWeights#RERANK_HEAD}), [2, hidden]; null for other models. */
    private final Weight rerankHead;

    /** Uploads the weights to {@code backend}; they live as long as the backend. */
    public DecoderModel(ModelConfig config, ModelWeights weights, Backend backend) {
        this.config = config;
        this.backend = backend;
        this.rope = config.rope();

        Map<Tensor, Weight> uploaded = new IdentityHashMap<>(); // a tied lm_head is the embedding table: upload it once
        embedTokens = upload(uploaded, weights.embedTokens());
        List<Layer> bound = new ArrayList<>();
        for (int l = 0; l < weights.layers().size(); l++) {
            ModelWeights.Layer layer = weights.layers().get(l);
            ModelWeights.Attention a = layer.attention();
            AttentionBlock attention = new AttentionBlock(upload(uploaded, a.norm()), upload(uploaded, a.q()),
                    upload(uploaded, a.k()), upload(uploaded, a.v()), upload(uploaded, a.o()),
                    upload(uploaded, a.qNorm()), upload(uploaded, a.kNorm()));
            Weight ffnNorm = upload(uploaded, layer.ffnNorm());
            FeedForwardBlock feedForward = switch (layer.feedForward()) {
                case ModelWeights.Dense d -> new DenseFeedForward(ffnNorm, upload(uploaded, d.gate()),
                        upload(uploaded, d.up()), upload(uploaded, d.down()));
                case ModelWeights.Experts e -> new ExpertFeedForward((FeedForward.Experts) config.feedForward(l),
                        ffnNorm, upload(uploaded, e.router()), uploadAll(uploaded, e.gate().experts()),
                        uploadAll(uploaded, e.up().experts()), uploadAll(uploaded, e.down().experts()));
            };
            bound.add(new Layer(attention, feedForward));
        }
        layers = List.copyOf(bound);
        finalNorm = upload(uploaded, weights.norm());
        lmHead = weights.lmHead() == null ? null : upload(uploaded, weights.lmHead());
        rerankHead = weights.rerankHead() == null ? null : upload(uploaded, weights.rerankHead());
    }

    private List<Weight> uploadAll(Map<Tensor, Weight> uploaded, List<Tensor> tensors) {
        return tensors.stream().map(t -> upload(uploaded, t)).toList();
    }

    private Weight upload(Map<Tensor, Weight> uploaded, Tensor tensor) {
        return uploaded.computeIfAbsent(tensor, backend::upload);
    }

    public ModelConfig config() {
        return config;
    }

    public Backend backend() {
        return backend;
    }

    /** A float32 KV cache of {@code sequences} slots of {@code contextLength} positions each. */
    public KvCache allocateCache(int sequences, int contextLength) {
        return allocateCache(sequences, contextLength, KvCacheTypes.F32);
    }

    /**
     * A KV cache of {@code sequences} slots of {@code contextLength} positions each, for this model's layers, its keys
     * and values stored as {@code types}.
     */
    public KvCache allocateCache(int sequences, int contextLength, KvCacheTypes types) {
        if (contextLength < 1) throw new FsException("the context length must be at least 1, got " + contextLength);
        return backend.allocateKvCache(config.numHiddenLayers(), sequences, contextLength,
                config.numKeyValueHeads(), config.headDim(), types);
    }

    /** Buffers for forwards of up to {@code batchRows} rows, {@code logitRows} of them with logits (1..batchRows). */
    public ForwardBuffers allocateBuffers(int batchRows, int logitRows) {
        return new ForwardBuffers(config, backend, batchRows, logitRows);
    }

    /**
     * Runs the batch's rows, writing each row's key and value to its sequence and position in {@code cache}, and
     * computes the logits of the batch's logit rows into {@code buffers}. The cache must hold, for each row, the keys
     * and values of its sequence's earlier positions (from earlier forwards, or from earlier rows of this batch).
     */
    public void forward(Batch batch, KvCache cache, ForwardBuffers buffers, Probe probe) {
        if (lmHead == null && batch.logitCount() > 0) {
            throw new FsException("this model has no output projection (lm_head.weight): it is an embedding model,"
                    + " which computes embeddings (fs embed), not logits");
        }
        run(batch, cache, buffers, probe);
        // The lm_head is the largest matmul: run it only on the rows whose logits are wanted.
        int count = batch.logitCount();
        if (count == 0) return;
        backend.matmul(buffers.headIn, lmHead, buffers.logits, count);
        buffers.logitsInUse = count;
        probe.after("logits", -1, buffers.logits, (long) count * config.vocabSize());
    }

    /**
     * Runs the batch's rows as {@link #forward} does, but stops at the final norm: the final-normed hidden states of
     * the batch's logit rows (no output projection) are then readable through {@link ForwardBuffers#readHidden}, in
     * logit-row order. What an embedding is pooled from.
     */
    public void hiddenStates(Batch batch, KvCache cache, ForwardBuffers buffers, Probe probe) {
        run(batch, cache, buffers, probe);
        buffers.hiddenInUse = batch.logitCount();
    }

    /** The layers and the final norm; the final-normed logit rows gathered, in order, into headIn. */
    private void run(Batch batch, KvCache cache, ForwardBuffers buffers, Probe probe) {
        int rows = batch.rows();
        if (rows > buffers.batchRows() || batch.logitCount() > buffers.logitRows()) {
            throw new IllegalArgumentException("a batch of " + rows + " rows with " + batch.logitCount()
                    + " logits does not fit buffers of " + buffers.batchRows() + " rows with " + buffers.logitRows());
        }
        RowPositions positions = batch.positions();
        if (positions.mostPositions() > cache.contextLength()) {
            throw new FsException("position " + (positions.mostPositions() - 1) + " does not fit the context of "
                    + cache.contextLength() + " tokens (raise --ctx, up to " + config.maxPositionEmbeddings() + ")");
        }
        if (positions.mostSequences() > cache.sequences()) {
            throw new IllegalArgumentException("sequence " + (positions.mostSequences() - 1) + " is not in a cache of "
                    + cache.sequences() + " sequences");
        }
        ForwardBuffers b = buffers;
        int hidden = config.hiddenSize();
        float eps = config.rmsNormEps();
        long hiddenLength = (long) rows * hidden;
        b.logitsInUse = 0; // until this forward's logits are written
        b.hiddenInUse = 0;
        b.rerankLogitsInUse = 0;

        backend.embed(embedTokens, batch.tokenArray(), b.x);
        probe.after("embed", -1, b.x, hiddenLength);

        for (int l = 0; l < layers.size(); l++) {
            Layer layer = layers.get(l);
            layer.attention().forward(backend, config, rope, l, positions, cache, b, probe);
            layer.feedForward().forward(backend, config, l, rows, b, probe);
        }

        backend.rmsNorm(b.x, finalNorm, b.xb, rows, eps);
        probe.after("final_norm", -1, b.xb, hiddenLength);

        // The rows whose logits (or hidden states) are wanted, gathered in order, one copy per stretch of consecutive
        // rows (a prefill's last rows are one copy).
        int count = batch.logitCount();
        for (int i = 0, end; i < count; i = end) {
            end = i + 1;
            while (end < count && batch.logitRow(end) == batch.logitRow(end - 1) + 1) end++;
            backend.copy(b.xb, (long) batch.logitRow(i) * hidden, b.headIn, (long) i * hidden, (long) (end - i) * hidden);
        }
    }

    /**
     * Runs the batch's rows as {@link #forward} does, but in place of the output projection computes the classifier
     * head's two logits ("yes", "no") of the batch's logit rows, readable through
     * {@link ForwardBuffers#readRerankLogits}, in logit-row order: a matmul like the lm_head's, of its two rows.
     */
    public void rerankLogits(Batch batch, KvCache cache, ForwardBuffers buffers, Probe probe) {
        if (rerankHead == null) {
            throw new IllegalStateException("this model has no reranker classifier head (" + ModelWeights.RERANK_HEAD
                    + ")");
        }
        run(batch, cache, buffers, probe);
        int count = batch.logitCount();
        if (count == 0) return;
        backend.matmul(buffers.headIn, rerankHead, buffers.logits, count);
        buffers.rerankLogitsInUse = count;
        probe.after("rerank_logits", -1, buffers.logits, 2L * count);
    }

    /** Whether the model has a reranker's classifier head: llama.cpp's reranker GGUF ({@code pooling_type} rank). */
    public boolean hasRerankHead() {
        return rerankHead != null;
    }

    /** Whether the model has an output projection: false for an embedding model stored without lm_head. */
    public boolean hasOutputProjection() {
        return lmHead != null;
    }
}
