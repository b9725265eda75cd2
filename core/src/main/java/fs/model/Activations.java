package fs.model;

import fs.backend.Backend;
import fs.backend.Buffer;

/**
 * The activations of one forward on one backend, for the blocks that run there: a model on one backend has one set,
 * a split model one per backend (see {@link ForwardBuffers}).
 */
final class Activations {
    final Backend backend;
    final Buffer x;      // the residual stream, [rows, hidden]
    final Buffer xb;     // normed input of a block, then a block's output before the residual add, [rows, hidden]
    final Buffer q;      // [rows, heads * headDim]
    final Buffer k;      // [rows, kvHeads * headDim]
    final Buffer v;      // [rows, kvHeads * headDim]
    final Buffer att;    // attention output, [rows, heads * headDim]
    final Buffer gate;   // [rows, feed-forward width], or [rows × experts used, expert width]; silu(gate) * up over it
    final Buffer up;     // as gate
    final Buffer routerLogits; // [rows, experts]; null without experts
    final Buffer expertOut;    // each (row, chosen expert)'s output, [rows × experts used, hidden]; null without experts
    /** The host copy of the last forward's router logits, reused while the batch's rows stay the same (decode). */
    private float[] hostRouterLogits = new float[0];

    Activations(ModelConfig config, Backend backend, int batchRows) {
        this.backend = backend;
        long rows = batchRows;
        x = backend.allocate(rows * config.hiddenSize());
        xb = backend.allocate(rows * config.hiddenSize());
        q = backend.allocate(rows * config.queryDim());
        k = backend.allocate(rows * config.kvDim());
        v = backend.allocate(rows * config.kvDim());
        att = backend.allocate(rows * config.queryDim());
        long ffnWidth = 0;
        for (FeedForward f : config.kinds()) {
            ffnWidth = Math.max(ffnWidth, f instanceof FeedForward.Experts e ? (long) e.used() * e.width() : f.width());
        }
        gate = backend.allocate(rows * ffnWidth);
        up = backend.allocate(rows * ffnWidth);
        int experts = config.largestExpertCount();
        routerLogits = experts == 0 ? null : backend.allocate(rows * experts);
        expertOut = experts == 0 ? null : backend.allocate(rows * config.mostExpertsUsed() * config.hiddenSize());
    }

    /** The router logits of the last {@code rows} rows routed among {@code experts}, on the host (a wait for them). */
    float[] readRouterLogits(int rows, int experts) {
        if (hostRouterLogits.length != rows * experts) hostRouterLogits = new float[rows * experts];
        backend.read(routerLogits, 0, hostRouterLogits);
        return hostRouterLogits;
    }
}
