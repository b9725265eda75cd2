package fs.model;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.Weight;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Qwen3's forward pass, exactly as Hugging Face's Qwen3ForCausalLM computes it, on any {@link Backend}.
 *
 * <p>Everything is sized once at construction: the weights are uploaded, the activations allocated for
 * {@link Shape#batchRows} tokens per forward, and the KV cache for {@link Shape#contextLength} positions. A forward
 * then allocates nothing. Logits are computed for the last {@link Shape#logitRows} rows of a batch only (one row
 * for generation; every row for {@code fs logits} and verification).
 */
public final class Qwen3Model {

    /**
     * How big the model's buffers are: the KV cache holds {@code contextLength} positions, one forward takes up to
     * {@code batchRows} tokens, and logits are kept for the last {@code logitRows} of them (1..batchRows).
     */
    public record Shape(int contextLength, int batchRows, int logitRows) {
        public Shape {
            if (contextLength < 1) throw new FsException("the context length must be at least 1, got " + contextLength);
            if (batchRows < 1) throw new IllegalArgumentException("batchRows must be at least 1: " + batchRows);
            if (logitRows < 1 || logitRows > batchRows) {
                throw new IllegalArgumentException("logitRows must be in 1.." + batchRows + ": " + logitRows);
            }
        }

        /** For generation: batched prefill, logits of the last row only. */
        public static Shape forGeneration(int contextLength, int batchRows) {
            return new Shape(contextLength, Math.min(batchRows, contextLength), 1);
        }

        /** For logits at every position: each batch keeps the logits of all its rows. */
        public static Shape forEveryPosition(int contextLength, int batchRows) {
            int rows = Math.min(batchRows, contextLength);
            return new Shape(contextLength, rows, rows);
        }
    }

    /** Receives control after each batch of {@link #forwardInBatches}, while that batch's logits are readable. */
    @FunctionalInterface
    public interface BatchListener {
        BatchListener NONE = (firstPosition, rows) -> {};

        void afterBatch(int firstPosition, int rows);
    }

    private record LayerWeights(
            Weight attnNorm, Weight qProj, Weight kProj, Weight vProj, Weight qNorm, Weight kNorm, Weight oProj,
            Weight ffnNorm, Weight gateProj, Weight upProj, Weight downProj) {}

    private final Qwen3Config config;
    private final Backend backend;
    private final Shape shape;
    /** Made once from the config: the backends keep their cos/sin tables per rope. */
    private final Rope rope;

    private final Weight embedTokens;
    private final List<LayerWeights> layers;
    private final Weight finalNorm;
    private final Weight lmHead;
    private final KvCache cache;

    // Activations, one row per token of the batch.
    private final Buffer x;      // the residual stream, [rows, hidden]
    private final Buffer xb;     // normed input of a block, then a block's output before the residual add, [rows, hidden]
    private final Buffer q;      // [rows, heads * headDim]
    private final Buffer k;      // [rows, kvHeads * headDim]
    private final Buffer v;      // [rows, kvHeads * headDim]
    private final Buffer att;    // attention output, [rows, heads * headDim]
    private final Buffer gate;   // [rows, intermediate]; silu(gate) * up is written over it
    private final Buffer up;     // [rows, intermediate]
    private final Buffer headIn; // the final-normed rows that get logits, [logitRows, hidden]
    private final Buffer logits; // [logitRows, vocab]
    private int logitRowsInUse;

    public Qwen3Model(Qwen3Config config, Qwen3Weights weights, Backend backend, Shape shape) {
        this.config = config;
        this.backend = backend;
        this.shape = shape;
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

        cache = backend.allocateKvCache(
                config.numHiddenLayers(), shape.contextLength(), config.numKeyValueHeads(), config.headDim());
        long rows = shape.batchRows();
        x = backend.allocate(rows * config.hiddenSize());
        xb = backend.allocate(rows * config.hiddenSize());
        q = backend.allocate(rows * config.queryDim());
        k = backend.allocate(rows * config.kvDim());
        v = backend.allocate(rows * config.kvDim());
        att = backend.allocate(rows * config.queryDim());
        gate = backend.allocate(rows * config.intermediateSize());
        up = backend.allocate(rows * config.intermediateSize());
        headIn = backend.allocate((long) shape.logitRows() * config.hiddenSize());
        logits = backend.allocate((long) shape.logitRows() * config.vocabSize());
    }

    private Weight upload(Map<Tensor, Weight> uploaded, Tensor tensor) {
        return uploaded.computeIfAbsent(tensor, backend::upload);
    }

    public Qwen3Config config() {
        return config;
    }

    public Shape shape() {
        return shape;
    }

    public Backend backend() {
        return backend;
    }

    /**
     * Runs {@code tokens} (at most {@link Shape#batchRows}) at positions startPos.., writing their keys and values to
     * the cache, and computes the logits of the last min(tokens, logitRows) rows. Cache positions before startPos must
     * hold the keys and values of the tokens before these.
     */
    public void forward(int[] tokens, int startPos, Probe probe) {
        int rows = tokens.length;
        if (rows < 1 || rows > shape.batchRows()) {
            throw new IllegalArgumentException("a forward takes 1.." + shape.batchRows() + " tokens, got " + rows);
        }
        checkFits(startPos, rows);
        int hidden = config.hiddenSize();
        int heads = config.numAttentionHeads();
        int kvHeads = config.numKeyValueHeads();
        float eps = config.rmsNormEps();
        long hiddenLength = (long) rows * hidden;
        long qLength = (long) rows * config.queryDim();
        long kvLength = (long) rows * config.kvDim();
        long ffnLength = (long) rows * config.intermediateSize();

        backend.embed(embedTokens, tokens, x);
        probe.after("embed", -1, x, hiddenLength);

        for (int l = 0; l < layers.size(); l++) {
            LayerWeights w = layers.get(l);

            // Attention block: x += o_proj(attention(rope(norm(q)), rope(norm(k)), v)) of rmsnorm(x).
            backend.rmsNorm(x, w.attnNorm(), xb, rows, eps);
            probe.after("attn_norm", l, xb, hiddenLength);
            backend.matmul(xb, w.qProj(), q, rows);
            probe.after("q_proj", l, q, qLength);
            backend.matmul(xb, w.kProj(), k, rows);
            probe.after("k_proj", l, k, kvLength);
            backend.matmul(xb, w.vProj(), v, rows);
            probe.after("v_proj", l, v, kvLength);
            backend.rmsNorm(q, w.qNorm(), q, rows * heads, eps); // per head: a row of the norm is one head
            probe.after("q_norm", l, q, qLength);
            backend.rmsNorm(k, w.kNorm(), k, rows * kvHeads, eps);
            probe.after("k_norm", l, k, kvLength);
            backend.rope(q, rows, heads, startPos, rope);
            probe.after("rope_q", l, q, qLength);
            backend.rope(k, rows, kvHeads, startPos, rope);
            probe.after("rope_k", l, k, kvLength);
            backend.storeKv(cache, l, k, v, rows, startPos);
            backend.attention(q, cache, l, att, rows, startPos, heads);
            probe.after("attention", l, att, qLength);
            backend.matmul(att, w.oProj(), xb, rows);
            probe.after("o_proj", l, xb, hiddenLength);
            backend.add(x, xb, hiddenLength);
            probe.after("attn_residual", l, x, hiddenLength);

            // Feed-forward block (SwiGLU): x += down(silu(gate(h)) * up(h)) with h = rmsnorm(x).
            backend.rmsNorm(x, w.ffnNorm(), xb, rows, eps);
            probe.after("ffn_norm", l, xb, hiddenLength);
            backend.matmul(xb, w.gateProj(), gate, rows);
            probe.after("gate_proj", l, gate, ffnLength);
            backend.matmul(xb, w.upProj(), up, rows);
            probe.after("up_proj", l, up, ffnLength);
            backend.siluMul(gate, up, gate, ffnLength);
            probe.after("silu_mul", l, gate, ffnLength);
            backend.matmul(gate, w.downProj(), xb, rows);
            probe.after("down_proj", l, xb, hiddenLength);
            backend.add(x, xb, hiddenLength);
            probe.after("ffn_residual", l, x, hiddenLength);
        }

        backend.rmsNorm(x, finalNorm, xb, rows, eps);
        probe.after("final_norm", -1, xb, hiddenLength);

        // The lm_head is the largest matmul: run it only on the rows whose logits are wanted (the last ones).
        logitRowsInUse = Math.min(rows, shape.logitRows());
        backend.copy(xb, (long) (rows - logitRowsInUse) * hidden, headIn, 0, (long) logitRowsInUse * hidden);
        backend.matmul(headIn, lmHead, logits, logitRowsInUse);
        probe.after("logits", -1, logits, (long) logitRowsInUse * config.vocabSize());
    }

    /**
     * Runs {@code tokens} at positions startPos.. as consecutive forwards of at most {@link Shape#batchRows} tokens;
     * {@code listener} sees each batch while its logits are readable. Afterwards the logits are those of the last
     * batch.
     */
    public void forwardInBatches(int[] tokens, int startPos, Probe probe, BatchListener listener) {
        checkFits(startPos, tokens.length);
        for (int done = 0; done < tokens.length; ) {
            int rows = Math.min(shape.batchRows(), tokens.length - done);
            int[] batch = Arrays.copyOfRange(tokens, done, done + rows);
            forward(batch, startPos + done, probe);
            listener.afterBatch(startPos + done, rows);
            done += rows;
        }
    }

    /** Throws the user-facing error when positions startPos..startPos+count-1 do not fit the context. */
    public void checkFits(int startPos, int count) {
        if (startPos < 0 || count < 0 || (long) startPos + count > shape.contextLength()) {
            throw new FsException("positions " + startPos + ".." + ((long) startPos + count - 1)
                    + " do not fit the context of " + shape.contextLength() + " tokens (raise --ctx, up to "
                    + config.maxPositionEmbeddings() + ")");
        }
    }

    /**
     * Number of rows with logits after the last forward; row i of them belongs to the token at batch row
     * {@code rows - logitRows() + i}.
     */
    public int logitRows() {
        return logitRowsInUse;
    }

    /** The id with the largest logit in a logits row (computed on the device). */
    public int argmax(int row) {
        checkLogitRow(row);
        return backend.argmax(logits, (long) row * config.vocabSize(), config.vocabSize());
    }

    /** Copies a logits row (vocabSize floats) to the host. */
    public void readLogits(int row, float[] dst) {
        checkLogitRow(row);
        if (dst.length != config.vocabSize()) {
            throw new IllegalArgumentException("a logits row has " + config.vocabSize() + " floats, not " + dst.length);
        }
        backend.read(logits, (long) row * config.vocabSize(), dst);
    }

    private void checkLogitRow(int row) {
        if (row < 0 || row >= logitRowsInUse) {
            throw new IllegalArgumentException("logits row " + row + " not in 0.." + (logitRowsInUse - 1));
        }
    }
}
