package fs.backend.cpu;

import java.lang.foreign.MemorySegment;

/**
 * A row format that packs a panel of a batched matmul faster than dequantizing its rows one by one and transposing
 * them (what {@link MatmulTask} does for any other format); the panel must come out the same floats.
 */
interface PanelPacking extends RowFormat {
    /**
     * Writes rows [row0, row0 + count) of a matrix with k columns (count ≤ PANEL) into {@code scratch.panel}: element
     * c of row row0 + j at {@code panel[c·PANEL + j]}; rows j ≥ count are zero.
     */
    void pack(MemorySegment w, long rowBytes, int k, int row0, int count, PanelScratch scratch);
}
