package fs.model;

import fs.backend.Backend;
import fs.backend.KvCache;
import fs.backend.Rope;
import fs.backend.RowPositions;
import fs.backend.Weight;

/**
 * Qwen3's attention block, shared by its architectures: x += o_proj(attention(rope(norm(q)), rope(norm(k)), v)) of
 * h = rmsnorm(x), q, k and v projections of h, the q and k norms per head, grouped-query attention over the cache.
 */
final class AttentionBlock {
    private final Weight norm, q, k, v, o, qNorm, kNorm;

    AttentionBlock(Weight norm, Weight q, Weight k, Weight v, Weight o, Weight qNorm, Weight kNorm) {
        this.norm = norm;
        this.q = q;
        this.k = k;
        this.v = v;
        this.o = o;
        this.qNorm = qNorm;
        this.kNorm = kNorm;
    }

    /** Layer {@code l}'s block, its keys and values in layer {@code cacheLayer} of {@code cache}. */
    void forward(Backend backend, ModelConfig config, Rope rope, int l, RowPositions positions, KvCache cache,
            int cacheLayer, Activations b, Probe probe) {
        int rows = positions.rows();
        int heads = config.numAttentionHeads();
        int kvHeads = config.numKeyValueHeads();
        float eps = config.rmsNormEps();
        long hiddenLength = (long) rows * config.hiddenSize();
        long qLength = (long) rows * config.queryDim();
        long kvLength = (long) rows * config.kvDim();

        backend.rmsNorm(b.x, norm, b.xb, rows, eps);
        probe.after("attn_norm", l, backend, b.xb, hiddenLength);
        backend.matmul(b.xb, q, b.q, rows);
        probe.after("q_proj", l, backend, b.q, qLength);
        backend.matmul(b.xb, k, b.k, rows);
        probe.after("k_proj", l, backend, b.k, kvLength);
        backend.matmul(b.xb, v, b.v, rows);
        probe.after("v_proj", l, backend, b.v, kvLength);
        backend.rmsNorm(b.q, qNorm, b.q, rows * heads, eps); // per head: a row of the norm is one head
        probe.after("q_norm", l, backend, b.q, qLength);
        backend.rmsNorm(b.k, kNorm, b.k, rows * kvHeads, eps);
        probe.after("k_norm", l, backend, b.k, kvLength);
        backend.rope(b.q, positions, heads, rope);
        probe.after("rope_q", l, backend, b.q, qLength);
        backend.rope(b.k, positions, kvHeads, rope);
        probe.after("rope_k", l, backend, b.k, kvLength);
        backend.storeKv(cache, cacheLayer, b.k, b.v, positions);
        backend.attention(b.q, cache, cacheLayer, b.att, positions, heads);
        probe.after("attention", l, backend, b.att, qLength);
        backend.matmul(b.att, o, b.xb, rows);
        probe.after("o_proj", l, backend, b.xb, hiddenLength);
        backend.add(b.x, b.xb, hiddenLength);
        probe.after("attn_residual", l, backend, b.x, hiddenLength);
    }
}
