package fs.model;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Qwen3 loaded on a {@link Backend}: its weights, uploaded once, and the forward pass, exactly as Hugging Face's
 * Qwen3ForCausalLM computes it. Immutable once built, and shared by everything that runs sequences on the model: the
 * KV caches ({@link #allocateCache}) and the buffers of a forward ({@link #allocateBuffers}) belong to whoever runs
 * them, so one loaded model serves one sequence ({@link SingleSequence}) or many (the scheduler) alike. The backend is
 * not thread-safe, so forwards on one model run on one thread at a time.
 */
public final class Qwen3Model {

    private record LayerWeights(
            Weight attnNorm, Weight qProj, Weight kProj, Weight vProj, Weight qNorm, Weight kNorm, Weight oProj,
            Weight ffnNorm, Weight gateProj, Weight upProj, Weight downProj) {}

    private final Qwen3Config config;
    private final Backend backend;
    /** Made once from the config: the backends keep their cos/sin tables per rope. */
    private final Rope rope;

    private final Weight embedTokens;
    private final List<LayerWeights> layers;
    private final Weight finalNorm;
    private final Weight lmHead;

    /** Uploads the weights to {@code backend}; they live as long as the backend. */
    public Qwen3Model(Qwen3Config config, Qwen3Weights weights, Backend backend) {
        this.config = config;
        this.backend = backend;
        this.rope = config.rope();

        Map<Tensor, Weight> uploaded = new IdentityHashMap<>(); // a tied lm_head is the embedding table: upload it once
        embedTokens = upload(uploaded, weights.embedTokens());
        List<LayerWeights> bound = new ArrayList<>();
        for (Qwen3Weights.Layer layer : weights.layers()) {
            bound.add(new LayerWeights(
                    upload(uploaded, layer.inputLayernorm()),
                    upload(uploaded, layer.qProj()),
                    upload(uploaded, layer.kProj()),
                    upload(uploaded, layer.vProj()),
                    upload(uploaded, layer.qNorm()),
                    upload(uploaded, layer.kNorm()),
                    upload(uploaded, layer.oProj()),
                    upload(uploaded, layer.postAttentionLayernorm()),
                    upload(uploaded, layer.gateProj()),
                    upload(uploaded, layer.upProj()),
                    upload(uploaded, layer.downProj())));
        }
        layers = List.copyOf(bound);
        finalNorm = upload(uploaded, weights.norm());
        lmHead = upload(uploaded, weights.lmHead());
    }

    private Weight upload(Map<Tensor, Weight> uploaded, Tensor tensor) {
        return uploaded.computeIfAbsent(tensor, backend::upload);
    }

    public Qwen3Config config() {
        return config;
    }

    public Backend backend() {
        return backend;
    }

    /** A KV cache of {@code sequences} slots of {@code contextLength} positions each, for this model's layers. */
    public KvCache allocateCache(int sequences, int contextLength) {
        if (contextLength < 1) throw new FsException("the context length must be at least 1, got " + contextLength);
        return backend.allocateKvCache(
                config.numHiddenLayers(), sequences, contextLength, config.numKeyValueHeads(), config.headDim());
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
        int heads = config.numAttentionHeads();
        int kvHeads = config.numKeyValueHeads();
        float eps = config.rmsNormEps();
        long hiddenLength = (long) rows * hidden;
        long qLength = (long) rows * config.queryDim();
        long kvLength = (long) rows * config.kvDim();
        long ffnLength = (long) rows * config.intermediateSize();
        b.logitsInUse = 0; // until this forward's logits are written

        backend.embed(embedTokens, batch.tokenArray(), b.x);
        probe.after("embed", -1, b.x, hiddenLength);

        for (int l = 0; l < layers.size(); l++) {
            LayerWeights w = layers.get(l);

            // Attention block: x += o_proj(attention(rope(norm(q)), rope(norm(k)), v)) of rmsnorm(x).
            backend.rmsNorm(b.x, w.attnNorm(), b.xb, rows, eps);
            probe.after("attn_norm", l, b.xb, hiddenLength);
            backend.matmul(b.xb, w.qProj(), b.q, rows);
            probe.after("q_proj", l, b.q, qLength);
            backend.matmul(b.xb, w.kProj(), b.k, rows);
            probe.after("k_proj", l, b.k, kvLength);
            backend.matmul(b.xb, w.vProj(), b.v, rows);
            probe.after("v_proj", l, b.v, kvLength);
            backend.rmsNorm(b.q, w.qNorm(), b.q, rows * heads, eps); // per head: a row of the norm is one head
            probe.after("q_norm", l, b.q, qLength);
            backend.rmsNorm(b.k, w.kNorm(), b.k, rows * kvHeads, eps);
            probe.after("k_norm", l, b.k, kvLength);
            backend.rope(b.q, positions, heads, rope);
            probe.after("rope_q", l, b.q, qLength);
            backend.rope(b.k, positions, kvHeads, rope);
            probe.after("rope_k", l, b.k, kvLength);
            backend.storeKv(cache, l, b.k, b.v, positions);
            backend.attention(b.q, cache, l, b.att, positions, heads);
            probe.after("attention", l, b.att, qLength);
            backend.matmul(b.att, w.oProj(), b.xb, rows);
            probe.after("o_proj", l, b.xb, hiddenLength);
            backend.add(b.x, b.xb, hiddenLength);
            probe.after("attn_residual", l, b.x, hiddenLength);

            // Feed-forward block (SwiGLU): x += down(silu(gate(h)) * up(h)) with h = rmsnorm(x).
            backend.rmsNorm(b.x, w.ffnNorm(), b.xb, rows, eps);
            probe.after("ffn_norm", l, b.xb, hiddenLength);
            backend.matmul(b.xb, w.gateProj(), b.gate, rows);
            probe.after("gate_proj", l, b.gate, ffnLength);
            backend.matmul(b.xb, w.upProj(), b.up, rows);
            probe.after("up_proj", l, b.up, ffnLength);
            backend.siluMul(b.gate, b.up, b.gate, ffnLength);
            probe.after("silu_mul", l, b.gate, ffnLength);
            backend.matmul(b.gate, w.downProj(), b.xb, rows);
            probe.after("down_proj", l, b.xb, hiddenLength);
            backend.add(b.x, b.xb, hiddenLength);
            probe.after("ffn_residual", l, b.x, hiddenLength);
        }

        backend.rmsNorm(b.x, finalNorm, b.xb, rows, eps);
        probe.after("final_norm", -1, b.xb, hiddenLength);

        // The lm_head is the largest matmul: run it only on the rows whose logits are wanted, gathered in order, one
        // copy per stretch of consecutive rows (a prefill's last rows are one copy).
        int count = batch.logitCount();
        if (count == 0) return;
        for (int i = 0, end; i < count; i = end) {
            end = i + 1;
            while (end < count && batch.logitRow(end) == batch.logitRow(end - 1) + 1) end++;
            backend.copy(b.xb, (long) batch.logitRow(i) * hidden, b.headIn, (long) i * hidden, (long) (end - i) * hidden);
        }
        backend.matmul(b.headIn, lmHead, b.logits, count);
        b.logitsInUse = count;
        probe.after("logits", -1, b.logits, (long) count * config.vocabSize());
    }
}
