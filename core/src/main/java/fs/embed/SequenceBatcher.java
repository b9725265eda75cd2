package fs.embed;

import fs.backend.KvCache;
import fs.backend.KvCacheTypes;
import fs.model.Batch;
import fs.model.DecoderModel;
import fs.model.ForwardBuffers;
import fs.model.Probe;
import java.util.Arrays;

/**
 * Runs many whole token sequences through a model, several in each forward (as the scheduler batches generation):
 * each sequence takes a slot of the KV cache and its tokens are packed, in order, into forwards of at most
 * {@code batchRows} rows beside those of the other slots; the forward that holds a sequence's last token computes that
 * row's logits, or its final-normed hidden state, and hands it to the caller while it is readable. Since fs computes
 * every row the same whatever else is in its batch, a sequence gives the same floats batched or alone. Not
 * thread-safe: forwards run on the caller's thread.
 */
public final class SequenceBatcher {
    /**
     * What the forward computes at each sequence's last token: the final-normed hidden state, the logits, or a
     * reranker's classifier head's two logits ({@link DecoderModel#rerankLogits}).
     */
    public enum Output { HIDDEN, LOGITS, RERANK_LOGITS }

    /** Receives sequence {@code index}'s result, row {@code row} of {@code buffers}, during the forward's turn. */
    @FunctionalInterface
    public interface LastRow {
        void accept(int index, ForwardBuffers buffers, int row);
    }

    private final DecoderModel model;
    private final KvCache cache;
    private final ForwardBuffers buffers;

    /**
     * Allocates a cache of {@code slots} sequences of {@code contextLength} positions each (keys and values stored
     * as {@code cacheTypes}) and buffers for forwards of {@code batchRows} rows.
     */
    public SequenceBatcher(DecoderModel model, int slots, int contextLength, int batchRows, KvCacheTypes cacheTypes) {
        this.model = model;
        this.cache = model.allocateCache(slots, contextLength, cacheTypes);
        this.buffers = model.allocateBuffers(batchRows, Math.min(slots, batchRows));
    }

    public DecoderModel model() {
        return model;
    }

    /** The most tokens one sequence may have. */
    public int contextLength() {
        return cache.contextLength();
    }

    /**
     * Runs every sequence (each 1..{@link #contextLength} tokens), handing each one's last row to {@code lastRow}
     * once its forward has run; sequences start in order as slots free up.
     */
    public void run(int[][] sequences, Output output, LastRow lastRow) {
        for (int i = 0; i < sequences.length; i++) {
            if (sequences[i].length < 1 || sequences[i].length > contextLength()) {
                throw new IllegalArgumentException("sequence " + i + " has " + sequences[i].length
                        + " tokens, not 1.." + contextLength());
            }
        }
        int slots = cache.sequences();
        int[] inSlot = new int[slots]; // the sequence a slot runs, -1: free
        int[] done = new int[slots];   // its tokens already run
        Arrays.fill(inSlot, -1);
        int[] finished = new int[buffers.logitRows()];
        int next = 0;
        int remaining = sequences.length;
        Batch.Builder builder = new Batch.Builder(buffers.batchRows());
        while (remaining > 0) {
            builder.clear();
            int logits = 0;
            for (int s = 0; s < slots && builder.rows() < buffers.batchRows(); s++) {
                if (inSlot[s] < 0) {
                    if (next == sequences.length) continue;
                    inSlot[s] = next++;
                    done[s] = 0;
                }
                int[] tokens = sequences[inSlot[s]];
                int take = Math.min(tokens.length - done[s], buffers.batchRows() - builder.rows());
                for (int t = 0; t < take; t++) {
                    int position = done[s] + t;
                    boolean last = position == tokens.length - 1;
                    builder.add(tokens[position], position, s, last);
                    if (last) finished[logits++] = s;
                }
                done[s] += take;
            }
            Batch batch = builder.build();
            switch (output) {
                case HIDDEN -> model.hiddenStates(batch, cache, buffers, Probe.NONE);
                case LOGITS -> model.forward(batch, cache, buffers, Probe.NONE);
                case RERANK_LOGITS -> model.rerankLogits(batch, cache, buffers, Probe.NONE);
            }
            for (int i = 0; i < logits; i++) {
                int s = finished[i];
                lastRow.accept(inSlot[s], buffers, i);
                inSlot[s] = -1;
                remaining--;
            }
        }
    }
}
