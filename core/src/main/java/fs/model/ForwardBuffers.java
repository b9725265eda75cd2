package fs.model;

import fs.backend.Backend;
import fs.backend.Buffer;

/**
 * The activations of one forward of up to {@link #batchRows} rows, and the logits of up to {@link #logitRows} of them,
 * on a model's backend. Whoever runs forwards owns one (a {@link SingleSequence}, the scheduler): a forward allocates
 * nothing. After {@link Qwen3Model#forward}, logits index i is the batch's {@code logitRow(i)}, readable until the next
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
    final Buffer gate;   // [rows, intermediate]; silu(gate) * up is written over it
    final Buffer up;     // [rows, intermediate]
    final Buffer headIn; // the final-normed rows that get logits, [logitRows, hidden]
    final Buffer logits; // [logitRows, vocab]
    /** Logits rows written by the last forward. */
    int logitsInUse;

    ForwardBuffers(Qwen3Config config, Backend backend, int batchRows, int logitRows) {
        if (batchRows < 1) throw new IllegalArgumentException("batchRows must be at least 1: " + batchRows);
        if (logitRows < 1 || logitRows > batchRows) {
            throw new IllegalArgumentException("logitRows must be in 1.." + batchRows + ": " + logitRows);
        }
        this.backend = backend;
        this.batchRows = batchRows;
        this.logitRows = logitRows;
        this.vocab = config.vocabSize();
        long rows = batchRows;
        x = backend.allocate(rows * config.hiddenSize());
        xb = backend.allocate(rows * config.hiddenSize());
        q = backend.allocate(rows * config.queryDim());
        k = backend.allocate(rows * config.kvDim());
        v = backend.allocate(rows * config.kvDim());
        att = backend.allocate(rows * config.queryDim());
        gate = backend.allocate(rows * config.intermediateSize());
        up = backend.allocate(rows * config.intermediateSize());
        headIn = backend.allocate((long) logitRows * config.hiddenSize());
        logits = backend.allocate((long) logitRows * vocab);
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

    private void checkIndex(int index) {
        if (index < 0 || index >= logitsInUse) {
            throw new IllegalArgumentException("logits row " + index + " not in 0.." + (logitsInUse - 1));
        }
    }
}
