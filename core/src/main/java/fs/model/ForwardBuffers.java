package fs.model;

import fs.backend.Backend;
import fs.backend.Buffer;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The activations of one forward of up to {@link #batchRows} rows, and the logits of up to {@link #logitRows} of them,
 * on a model's backends: a set of {@link Activations} on each backend its {@link Placement} uses, and the output's
 * buffers on the output's backend. Whoever runs forwards owns one (a {@link SingleSequence}, the scheduler): a forward
 * allocates nothing. After {@link DecoderModel#forward}, logits index i is the batch's {@code logitRow(i)}, readable
 * until the next forward into these buffers. Not thread-safe: used by the thread that runs the backends.
 */
public final class ForwardBuffers {
    /** The output's backend, where headIn and logits live. */
    private final Backend backend;
    private final int batchRows;
    private final int logitRows;
    private final int vocab;

    /** Each backend's activations, in the order of {@link Placement#backends}. */
    private final List<Activations> activations;
    /**
     * The hidden state on its way between two backends that are both host memory (no {@link Backend#pinnedStaging}),
     * grown to the largest batch handed off.
     */
    private float[] handedOff = new float[0];
    final Buffer headIn; // the final-normed rows that get logits, [logitRows, hidden]
    final Buffer logits; // [logitRows, vocab]
    /** Logits rows written by the last forward. */
    int logitsInUse;
    /** Hidden-state rows written by the last {@link DecoderModel#hiddenStates}. */
    int hiddenInUse;
    /** Rows of two reranker logits written by the last {@link DecoderModel#rerankLogits}, at the start of logits. */
    int rerankLogitsInUse;
    private final int hidden;

    ForwardBuffers(ModelConfig config, Placement placement, int batchRows, int logitRows) {
        if (batchRows < 1) throw new IllegalArgumentException("batchRows must be at least 1: " + batchRows);
        if (logitRows < 1 || logitRows > batchRows) {
            throw new IllegalArgumentException("logitRows must be in 1.." + batchRows + ": " + logitRows);
        }
        this.backend = placement.output();
        this.batchRows = batchRows;
        this.logitRows = logitRows;
        this.vocab = config.vocabSize();
        this.hidden = config.hiddenSize();
        this.activations = placement.backends().stream().map(b -> new Activations(config, b, batchRows)).toList();
        headIn = backend.allocate((long) logitRows * config.hiddenSize());
        logits = backend.allocate((long) logitRows * vocab);
    }

    /** The activations on {@code on}, one of the placement's backends. */
    Activations on(Backend on) {
        for (Activations a : activations) if (a.backend == on) return a;
        throw new IllegalArgumentException("no activations on " + on.description());
    }

    /**
     * The activations on {@code to} holding the residual stream of {@code rows} rows that {@code from} holds: the
     * same when they are on one backend, else {@code to}'s, with the stream copied there through host memory: a
     * device's page-locked staging (read into it from the device, or written from it to the device, at the bus's
     * speed), the CPU side copying between it and its buffer.
     */
    Activations handOff(Activations from, Backend to, int rows) {
        if (from.backend == to) return from;
        MemorySegment host = handOffMemory(from.backend, to, rows * hidden);
        from.backend.read(from.x, 0, host);
        Activations next = on(to);
        to.write(host, next.x, 0);
        return next;
    }

    /** Host memory of {@code length} floats between two backends: a device's pinned staging, else an array. */
    private MemorySegment handOffMemory(Backend from, Backend to, int length) {
        long bytes = (long) length * Float.BYTES;
        return from.pinnedStaging(bytes).or(() -> to.pinnedStaging(bytes)).orElseGet(() -> {
            if (handedOff.length < length) handedOff = new float[length];
            return MemorySegment.ofArray(handedOff);
        }).asSlice(0, bytes);
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
