package fs.model;

import fs.backend.RowPositions;
import java.util.Arrays;

/**
 * The rows of one forward, as llama.cpp's llama_batch: per row a token, its position and its sequence (a slot of the
 * KV cache), and the explicit list of rows whose logits are computed. Rows of several sequences at unrelated
 * positions may share a batch (decode steps of every active sequence plus a chunk of a prompt); a sequence's rows
 * that follow each other are a run, which the backends process together. Immutable.
 */
public final class Batch {
    private final int[] tokens;
    private final RowPositions positions;
    private final int[] logitRows;

    private Batch(int[] tokens, RowPositions positions, int[] logitRows) {
        if (tokens.length == 0) throw new IllegalArgumentException("a batch needs at least one row");
        if (positions.rows() != tokens.length) {
            throw new IllegalArgumentException(tokens.length + " tokens for " + positions.rows() + " positions");
        }
        for (int i = 0; i < logitRows.length; i++) {
            int row = logitRows[i];
            if (row < 0 || row >= tokens.length || (i > 0 && row <= logitRows[i - 1])) {
                throw new IllegalArgumentException("logit rows must be increasing rows of 0.." + (tokens.length - 1)
                        + ": " + Arrays.toString(logitRows));
            }
        }
        this.tokens = tokens;
        this.positions = positions;
        this.logitRows = logitRows;
    }

    /**
     * {@code tokens} at consecutive positions startPos.. of one sequence, with the logits of the last
     * {@code logitCount} rows (at most all of them).
     */
    public static Batch run(int sequence, int[] tokens, int startPos, int logitCount) {
        int count = Math.min(logitCount, tokens.length);
        int[] logitRows = new int[count];
        for (int i = 0; i < count; i++) logitRows[i] = tokens.length - count + i;
        return new Batch(tokens.clone(), RowPositions.run(sequence, startPos, tokens.length), logitRows);
    }

    public int rows() {
        return tokens.length;
    }

    /** Every row's position and sequence, as the backends take them. */
    public RowPositions positions() {
        return positions;
    }

    /** How many rows get logits; logits index i belongs to row {@link #logitRow logitRow(i)}. */
    public int logitCount() {
        return logitRows.length;
    }

    public int logitRow(int index) {
        return logitRows[index];
    }

    /** The token ids, not copied: for the model's embed only. */
    int[] tokenArray() {
        return tokens;
    }

    /** Collects the rows of a batch one at a time (the scheduler's way of building a step). Not thread-safe. */
    public static final class Builder {
        private int[] tokens;
        private int[] positions;
        private int[] sequences;
        private int[] logitRows;
        private int rows;
        private int logits;

        public Builder(int capacity) {
            tokens = new int[capacity];
            positions = new int[capacity];
            sequences = new int[capacity];
            logitRows = new int[capacity];
        }

        /** Adds a row; returns its logits index when {@code wantLogits}, else -1. */
        public int add(int token, int position, int sequence, boolean wantLogits) {
            if (rows == tokens.length) {
                int n = Math.max(1, 2 * rows);
                tokens = Arrays.copyOf(tokens, n);
                positions = Arrays.copyOf(positions, n);
                sequences = Arrays.copyOf(sequences, n);
                logitRows = Arrays.copyOf(logitRows, n);
            }
            tokens[rows] = token;
            positions[rows] = position;
            sequences[rows] = sequence;
            if (wantLogits) logitRows[logits] = rows;
            rows++;
            return wantLogits ? logits++ : -1;
        }

        public int rows() {
            return rows;
        }

        public Batch build() {
            return new Batch(Arrays.copyOf(tokens, rows),
                    RowPositions.of(Arrays.copyOf(positions, rows), Arrays.copyOf(sequences, rows)),
                    Arrays.copyOf(logitRows, logits));
        }

        /** Empties the builder for the next batch. */
        public void clear() {
            rows = 0;
            logits = 0;
        }
    }
}
