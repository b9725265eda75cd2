package fs.model;

import fs.FsException;
import fs.backend.KvCache;
import fs.backend.KvCacheTypes;
import java.util.Arrays;

/**
 * One sequence on a shared {@link DecoderModel}: its own KV cache (one sequence slot) and forward buffers, and the
 * one-sequence forward that {@code fs run}, {@code fs chat}, {@code fs bench}, {@code fs logits}, {@code fs verify} and
 * the {@link Probe}-based tools use. It is the special case of a {@link Batch} whose rows are consecutive positions of
 * sequence 0. Logits are computed for the last {@link Shape#logitRows} rows of a forward only (one row for
 * generation; every row for {@code fs logits} and verification). Not thread-safe, as the backend.
 */
public final class SingleSequence {

    /**
     * How big the buffers are: the KV cache holds {@code contextLength} positions, one forward takes up to
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

    private final DecoderModel model;
    private final Shape shape;
    private final KvCache cache;
    private final ForwardBuffers buffers;

    /**
     * Allocates the cache and buffers of {@code shape} on the model's backend (they live as long as it), the cache of
     * float32 keys and values: the exact one, which the oracle and the golden tests compare.
     */
    public SingleSequence(DecoderModel model, Shape shape) {
        this(model, shape, KvCacheTypes.F32);
    }

    /**
     * Allocates the cache and buffers of {@code shape} on the model's backend (they live as long as it), the cache's
     * keys and values stored as {@code cacheTypes}.
     */
    public SingleSequence(DecoderModel model, Shape shape, KvCacheTypes cacheTypes) {
        this.model = model;
        this.shape = shape;
        this.cache = model.allocateCache(1, shape.contextLength(), cacheTypes);
        this.buffers = model.allocateBuffers(shape.batchRows(), shape.logitRows());
    }

    public DecoderModel model() {
        return model;
    }

    public ModelConfig config() {
        return model.config();
    }

    public Shape shape() {
        return shape;
    }

    /** What the cache stores keys and values as. */
    public KvCacheTypes cacheTypes() {
        return cache.types();
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
        model.forward(Batch.run(0, tokens, startPos, shape.logitRows()), cache, buffers, probe);
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
            forward(Arrays.copyOfRange(tokens, done, done + rows), startPos + done, probe);
            listener.afterBatch(startPos + done, rows);
            done += rows;
        }
    }

    /** Throws the user-facing error when positions startPos..startPos+count-1 do not fit the context. */
    public void checkFits(int startPos, int count) {
        checkFits(model.config(), shape.contextLength(), startPos, count);
    }

    /**
     * The same for a context of {@code contextLength} positions of a {@code config} model held elsewhere (a
     * scheduler's slot).
     */
    public static void checkFits(ModelConfig config, int contextLength, int startPos, int count) {
        if (startPos < 0 || count < 0 || (long) startPos + count > contextLength) {
            throw new FsException("positions " + startPos + ".." + ((long) startPos + count - 1)
                    + " do not fit the context of " + contextLength + " tokens (raise --ctx, up to "
                    + config.maxPositionEmbeddings() + ")");
        }
    }

    /**
     * Number of rows with logits after the last forward; row i of them belongs to the token at batch row
     * {@code rows - logitRows() + i}.
     */
    public int logitRows() {
        return buffers.logitCount();
    }

    /** The id with the largest logit in a logits row (computed on the device). */
    public int argmax(int row) {
        return buffers.argmax(row);
    }

    /** Copies a logits row (vocabSize floats) to the host. */
    public void readLogits(int row, float[] dst) {
        buffers.readLogits(row, dst);
    }

    /** The buffers of this sequence's forwards: the last forward's logits, to pick tokens from. */
    public ForwardBuffers buffers() {
        return buffers;
    }
}
