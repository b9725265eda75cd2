package fs.backend;

import java.util.Arrays;

/**
 * Where each row of one forward sits, as llama.cpp's llama_batch says it per token: row r is at position
 * {@link #position position(r)} of sequence {@link #sequence sequence(r)}. The sequence is the KV cache's sequence
 * slot the row writes its key and value to ({@link Backend#storeKv}), and its attention sees that sequence's cache
 * positions 0..position(r) ({@link Backend#attention}). Rows of several sequences, at unrelated positions, may share a
 * forward; the rows of one sequence that follow each other form a run, which the backends process together (the CPU
 * attention tiles a run's queries, so a one-sequence prefill costs what it did before sequences existed).
 *
 * <p>Immutable (the arrays are copied in), so a backend may keep what it derived from one: the OpenCL backend uploads
 * the positions once, when it first sees them, and reuses the upload for every layer of the forward.
 */
public final class RowPositions {
    private final int[] positions;
    private final int[] sequences;
    private final int mostPositions;
    private final int mostSequences;

    private RowPositions(int[] positions, int[] sequences) {
        if (positions.length != sequences.length) {
            throw new IllegalArgumentException(positions.length + " positions for " + sequences.length + " sequences");
        }
        int most = 0, mostSequence = 0;
        for (int r = 0; r < positions.length; r++) {
            if (positions[r] < 0) throw new IllegalArgumentException("row " + r + " has position " + positions[r]);
            if (sequences[r] < 0) throw new IllegalArgumentException("row " + r + " has sequence " + sequences[r]);
            most = Math.max(most, positions[r] + 1);
            mostSequence = Math.max(mostSequence, sequences[r] + 1);
        }
        this.positions = positions;
        this.sequences = sequences;
        this.mostPositions = most;
        this.mostSequences = mostSequence;
    }

    /** Row r at {@code positions[r]} of sequence {@code sequences[r]} (both ≥ 0, of one length). */
    public static RowPositions of(int[] positions, int[] sequences) {
        return new RowPositions(positions.clone(), sequences.clone());
    }

    /** {@code rows} consecutive positions startPos.. of one sequence: a prefill, or one token's decode. */
    public static RowPositions run(int sequence, int startPos, int rows) {
        if (rows < 0) throw new IllegalArgumentException("negative row count " + rows);
        if (startPos < 0 || (long) startPos + rows > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("positions " + startPos + ".. of " + rows + " rows");
        }
        int[] positions = new int[rows], sequences = new int[rows];
        for (int r = 0; r < rows; r++) positions[r] = startPos + r;
        Arrays.fill(sequences, sequence);
        return new RowPositions(positions, sequences);
    }

    public int rows() {
        return positions.length;
    }

    public int position(int row) {
        return positions[row];
    }

    public int sequence(int row) {
        return sequences[row];
    }

    /** One more than the largest position (0 without rows): how many cache positions the rows reach. */
    public int mostPositions() {
        return mostPositions;
    }

    /** One more than the largest sequence (0 without rows): how many cache sequences the rows reach. */
    public int mostSequences() {
        return mostSequences;
    }

    /** The end (exclusive) of the run of rows of {@code row}'s sequence that starts at {@code row}. */
    public int runEnd(int row) {
        int end = row + 1;
        while (end < sequences.length && sequences[end] == sequences[row]) end++;
        return end;
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("RowPositions[");
        for (int r = 0; r < positions.length; r++) {
            if (r > 0) s.append(", ");
            s.append(sequences[r]).append('@').append(positions[r]);
        }
        return s.append(']').toString();
    }
}
