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
 * A decoder-only transformer loaded on its backends: its weights, uploaded once, and the forward pass, exactly as
 * Hugging Face computes it for the model's {@link Architecture}: the embedding, then per layer an attention block and
 * a feed-forward block (dense or a mixture of experts, as the config says for that layer), the final norm and the
 * output projection. Each part runs on the backend its {@link Placement} names (one backend for the whole model, or a
 * split: some layers on an OpenCL device, the rest on the CPU); the forward is the same code either way, each block
 * asking its own backend, and the hidden state is handed to the next backend where the placement changes. Immutable
 * once built, and shared by everything that runs sequences on the model: the KV caches ({@link #allocateCache}) and the
 * buffers of a forward ({@link #allocateBuffers}) belong to whoever runs them, so one loaded model serves one sequence
 * ({@link SingleSequence}) or many (the scheduler) alike. The backends are not thread-safe, so forwards on one model
 * run on one thread at a time.
 */
public final class DecoderModel {

    private record Layer(AttentionBlock attention, FeedForwardBlock feedForward) {}

    private final ModelConfig config;
    private final Placement placement;
    /** Made once from the config: the backends keep their cos/sin tables per rope. */
    private final Rope rope;

    private final Weight embedTokens;
    private final List<Layer> layers;
    /** Per layer, which part of a {@link SplitKvCache} holds its keys and values, and which of that part's layers. */
    private final int[] cachePart, cacheLayer;
    /** Whether the attention runs on more than one backend, and so the cache is a {@link SplitKvCache}. */
    private final boolean cacheSplit;
    private final Weight finalNorm;
    /** Null for a model without an output projection (an embedding model): it computes hidden states only. */
    private final Weight lmHead;
    /** A reranker GGUF's classifier head ({@link ModelWeights#RERANK_HEAD}), [2, hidden]; null for other models. */
    private final Weight rerankHead;

    /** Uploads the weights to {@code backend}; they live as long as the backend. */
    public DecoderModel(ModelConfig config, ModelWeights weights, Backend backend) {
        this(config, weights, Placement.whole(backend, weights.layers().size()));
    }

    /** Uploads each part's weights to the backend {@code placement} names for it; they live as long as it. */
    public DecoderModel(ModelConfig config, ModelWeights weights, Placement placement) {
        if (placement.layers().size() != weights.layers().size()) {
            throw new IllegalArgumentException("a placement of " + placement.layers().size() + " layers for a model of "
                    + weights.layers().size());
        }
        this.config = config;
        this.placement = placement;
        this.rope = config.rope();

        // A tied lm_head is the embedding table: upload it once per backend.
        Map<Backend, Map<Tensor, Weight>> uploaded = new IdentityHashMap<>();
        embedTokens = upload(uploaded, placement.input(), weights.embedTokens());
        List<Backend> cacheBackends = placement.attentionBackends();
        cachePart = new int[weights.layers().size()];
        cacheLayer = new int[weights.layers().size()];
        cacheSplit = cacheBackends.size() > 1;
        int[] layersInPart = new int[cacheBackends.size()];
        List<Layer> bound = new ArrayList<>();
        for (int l = 0; l < weights.layers().size(); l++) {
            ModelWeights.Layer layer = weights.layers().get(l);
            Backend at = placement.layers().get(l).attention(), ffn = placement.layers().get(l).feedForward();
            cachePart[l] = cacheBackends.indexOf(at);
            cacheLayer[l] = layersInPart[cachePart[l]]++;
            ModelWeights.Attention a = layer.attention();
            AttentionBlock attention = new AttentionBlock(upload(uploaded, at, a.norm()), upload(uploaded, at, a.q()),
                    upload(uploaded, at, a.k()), upload(uploaded, at, a.v()), upload(uploaded, at, a.o()),
                    upload(uploaded, at, a.qNorm()), upload(uploaded, at, a.kNorm()));
            Weight ffnNorm = upload(uploaded, ffn, layer.ffnNorm());
            FeedForwardBlock feedForward = switch (layer.feedForward()) {
                case ModelWeights.Dense d -> new DenseFeedForward(ffnNorm, upload(uploaded, ffn, d.gate()),
                        upload(uploaded, ffn, d.up()), upload(uploaded, ffn, d.down()));
                case ModelWeights.Experts e -> new ExpertFeedForward((FeedForward.Experts) config.feedForward(l),
                        ffnNorm, upload(uploaded, ffn, e.router()), uploadAll(uploaded, ffn, e.gate().experts()),
                        uploadAll(uploaded, ffn, e.up().experts()), uploadAll(uploaded, ffn, e.down().experts()));
            };
            bound.add(new Layer(attention, feedForward));
        }
        layers = List.copyOf(bound);
        finalNorm = upload(uploaded, placement.output(), weights.norm());
        lmHead = weights.lmHead() == null ? null : upload(uploaded, placement.output(), weights.lmHead());
        rerankHead = weights.rerankHead() == null ? null : upload(uploaded, placement.output(), weights.rerankHead());
    }

    private static List<Weight> uploadAll(Map<Backend, Map<Tensor, Weight>> uploaded, Backend backend,
            List<Tensor> tensors) {
        return tensors.stream().map(t -> upload(uploaded, backend, t)).toList();
    }

    private static Weight upload(Map<Backend, Map<Tensor, Weight>> uploaded, Backend backend, Tensor tensor) {
        return uploaded.computeIfAbsent(backend, b -> new IdentityHashMap<>()).computeIfAbsent(tensor, backend::upload);
    }

    public ModelConfig config() {
        return config;
    }

    /** Which backend runs each part of the model. */
    public Placement placement() {
        return placement;
    }

    /** A float32 KV cache of {@code sequences} slots of {@code contextLength} positions each. */
    public KvCache allocateCache(int sequences, int contextLength) {
        return allocateCache(sequences, contextLength, KvCacheTypes.F32);
    }

    /**
     * A KV cache of {@code sequences} slots of {@code contextLength} positions each, for this model's layers, its keys
     * and values stored as {@code types}: each layer's on the backend that runs its attention.
     */
    public KvCache allocateCache(int sequences, int contextLength, KvCacheTypes types) {
        if (contextLength < 1) throw new FsException("the context length must be at least 1, got " + contextLength);
        List<KvCache> parts = placement.attentionBackends().stream().map(b -> b.allocateKvCache(placement.attentionLayersOn(b), sequences,
                contextLength, config.numKeyValueHeads(), config.headDim(), types)).toList();
        return parts.size() == 1 ? parts.getFirst() : new SplitKvCache(parts, config.numHiddenLayers());
    }

    /** Buffers for forwards of up to {@code batchRows} rows, {@code logitRows} of them with logits (1..batchRows). */
    public ForwardBuffers allocateBuffers(int batchRows, int logitRows) {
        return new ForwardBuffers(config, placement, batchRows, logitRows);
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
        buffers.logitsInUse = runWithHead(batch, cache, buffers, probe, lmHead, config.vocabSize(), "logits");
    }

    /**
     * Runs the batch's rows, then {@code head} ({@code width} outputs a row) on the batch's logit rows only (the
     * lm_head is the largest matmul), into the logits buffer; the number of rows it computed.
     */
    private int runWithHead(Batch batch, KvCache cache, ForwardBuffers buffers, Probe probe, Weight head, int width,
            String op) {
        run(batch, cache, buffers, probe);
        int count = batch.logitCount();
        if (count == 0) return 0;
        Backend output = placement.output();
        output.matmul(buffers.headIn, head, buffers.logits, count);
        probe.after(op, -1, output, buffers.logits, (long) count * width);
        return count;
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
        if (cache instanceof SplitKvCache != cacheSplit) {
            throw new IllegalArgumentException("the cache was not allocated by this model's placement");
        }
        int hidden = config.hiddenSize();
        float eps = config.rmsNormEps();
        long hiddenLength = (long) rows * hidden;
        buffers.logitsInUse = 0; // until this forward's logits are written
        buffers.hiddenInUse = 0;
        buffers.rerankLogitsInUse = 0;

        Activations b = buffers.on(placement.input());
        b.backend.embed(embedTokens, batch.tokenArray(), b.x);
        probe.after("embed", -1, b.backend, b.x, hiddenLength);

        for (int l = 0; l < layers.size(); l++) {
            Layer layer = layers.get(l);
            Placement.Layer where = placement.layers().get(l);
            b = buffers.handOff(b, where.attention(), rows);
            KvCache layerCache = cache instanceof SplitKvCache split ? split.parts().get(cachePart[l]) : cache;
            layer.attention().forward(b.backend, config, rope, l, positions, layerCache, cacheLayer[l], b, probe);
            b = buffers.handOff(b, where.feedForward(), rows);
            layer.feedForward().forward(b.backend, config, l, rows, b, probe);
        }

        b = buffers.handOff(b, placement.output(), rows);
        Backend output = b.backend;
        output.rmsNorm(b.x, finalNorm, b.xb, rows, eps);
        probe.after("final_norm", -1, output, b.xb, hiddenLength);

        // The rows whose logits (or hidden states) are wanted, gathered in order, one copy per stretch of consecutive
        // rows (a prefill's last rows are one copy).
        int count = batch.logitCount();
        for (int i = 0, end; i < count; i = end) {
            end = i + 1;
            while (end < count && batch.logitRow(end) == batch.logitRow(end - 1) + 1) end++;
            output.copy(b.xb, (long) batch.logitRow(i) * hidden, buffers.headIn, (long) i * hidden,
                    (long) (end - i) * hidden);
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
        buffers.rerankLogitsInUse = runWithHead(batch, cache, buffers, probe, rerankHead, 2, "rerank_logits");
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
