package fs.model;

import fs.backend.Backend;
import fs.backend.Buffer;

/**
 * The activations of one forward of up to {@link #batchRows} rows, and the logits of up to {@link #logitRows} of them,
 * on a model's backend. Whoever runs forwards owns one (a {@link SingleSequence}, the scheduler): a forward allocates
 * nothing. After {@link DecoderModel#forward}, logits index i is the batch's {@code logitRow(i)}, readable until the next
 * forward into these buffers. Not thread-safe: used by the thread that runs the backend.
 */
public final class ForwardBuffers {
    private final Backend backend;
    private final int batchRows;
    private final int logitRows;
    private final int vocab;

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
    final Buffer headIn; // the final-normed rows that get logits, [logitRows, hidden]
    final Buffer logits; // [logitRows, vocab]
    /** Logits rows written by the last forward. */
    int logitsInUse;
    /** Hidden-state rows written by the last {@link DecoderModel#hiddenStates}. */
    int hiddenInUse;
    /** Rows of two reranker logits written by the last {@link DecoderModel#rerankLogits}, at the start of logits. */
    int rerankLogitsInUse;
    private final int hidden;

    ForwardBuffers(ModelConfig config, Backend backend, int batchRows, int logitRows) {
        if (batchRows < 1) throw new IllegalArgumentException("batchRows must be at least 1: " + batchRows);
        if (logitRows < 1 || logitRows > batchRows) {
            throw new IllegalArgumentException("logitRows must be in 1.." + batchRows + ": " + logitRows);
        }
        this.backend = backend;
        this.batchRows = batchRows;
        this.logitRows = logitRows;
        this.vocab = config.vocabSize();
        this.hidden = config.hiddenSize();
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
        headIn = backend.allocate((long) logitRows * config.hiddenSize());
        logits = backend.allocate((long) logitRows * vocab);
    }

    /** The router logits of the last {@code rows} rows routed among {@code experts}, on the host (a wait for them). */
    float[] readRouterLogits(int rows, int experts) {
        if (hostRouterLogits.length != rows * experts) hostRouterLogits = new float[rows * experts];
        backend.read(routerLogits, 0, hostRouterLogits);
        return hostRouterLogits;
    }

    /** The most rows a forward into these buffers may have. */
    public int batchRows() {
        return batchRows;
    }

    /** The most rows of a batch that may get logits. */
    public int logitRows() {
        return logitRows;
    }

    /** Logits rows the last forward wrote (its batch's logitCount). */
    public int logitCount() {
        return logitsInUse;
    }

    /** The id with the largest logit in logits row {@code index} (computed on the device). */
    public int argmax(int index) {
        checkIndex(index);
        return backend.argmax(logits, (long) index * vocab, vocab);
    }

    /** Copies logits row {@code index} (vocabSize floats) to the host. */
    public void readLogits(int index, float[] dst) {
        checkIndex(index);
        if (dst.length != vocab) {
            throw new IllegalArgumentException("a logits row has " + vocab + " floats, not " + dst.length);
        }
        backend.read(logits, (long) index * vocab, dst);
    }

    /**
     * Copies the final-normed hidden state of row {@code index} of the last {@link DecoderModel#hiddenStates}'s logit
     * rows (hiddenSize floats) to the host.
     */
    public void readHidden(int index, float[] dst) {
        if (index < 0 || index >= hiddenInUse) {
            throw new IllegalArgumentException("hidden row " + index + " not in 0.." + (hiddenInUse - 1));
        }
        if (dst.length != hidden) {
            throw new IllegalArgumentException("a hidden row has " + hidden + " floats, not " + dst.length);
        }
        backend.read(headIn, (long) index * hidden, dst);
    }

    /**
     * Copies the classifier head's two logits ("yes", "no") of row {@code index} of the last
     * {@link DecoderModel#rerankLogits}'s logit rows to the host.
     */
    public void readRerankLogits(int index, float[] dst) {
        if (index < 0 || index >= rerankLogitsInUse) {
            throw new IllegalArgumentException("rerank row " + index + " not in 0.." + (rerankLogitsInUse - 1));
        }
        if (dst.length != 2) throw new IllegalArgumentException("a rerank row has 2 floats, not " + dst.length);
        backend.read(logits, 2L * index, dst);
    }

    private void checkIndex(int index) {
        if (index < 0 || index >= logitsInUse) {
            throw new IllegalArgumentException("logits row " + index + " not in 0.." + (logitsInUse - 1));
        }
    }
}
