package fs.grammar;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A set of Unicode scalar values (surrogates never belong to one, as UTF-8 cannot carry them), as sorted disjoint
 * inclusive ranges, with a bitmap for ASCII since most grammar characters are ASCII.
 */
final class CodePointSet {
    static final int MAX = 0x10FFFF;
    private final int[] ranges; // lo0, hi0, lo1, hi1, ... sorted, disjoint, not adjacent
    private final long asciiLow;
    private final long asciiHigh;

    private CodePointSet(int[] ranges) {
        this.ranges = ranges;
        long low = 0, high = 0;
        for (int i = 0; i < ranges.length; i += 2) {
            for (int c = ranges[i]; c <= Math.min(ranges[i + 1], 127); c++) {
                if (c < 64) low |= 1L << c;
                else high |= 1L << (c - 64);
            }
        }
        this.asciiLow = low;
        this.asciiHigh = high;
    }

    static CodePointSet of(int codePoint) {
        return ofRanges(new int[] {codePoint, codePoint}, false);
    }

    static CodePointSet any() {
        return ofRanges(new int[] {0, MAX}, false);
    }

    /** The set of the given ranges (pairs, in any order, possibly overlapping), or its complement when negated. */
    static CodePointSet ofRanges(int[] pairs, boolean negated) {
        int[][] sorted = new int[pairs.length / 2][];
        for (int i = 0; i < sorted.length; i++) sorted[i] = new int[] {pairs[2 * i], pairs[2 * i + 1]};
        Arrays.sort(sorted, (a, b) -> Integer.compare(a[0], b[0]));
        List<int[]> merged = new ArrayList<>();
        for (int[] r : sorted) {
            if (r[0] > r[1]) continue;
            if (!merged.isEmpty() && r[0] <= merged.getLast()[1] + 1) {
                merged.getLast()[1] = Math.max(merged.getLast()[1], r[1]);
            } else {
                merged.add(new int[] {r[0], r[1]});
            }
        }
        if (negated) {
            List<int[]> complement = new ArrayList<>();
            int next = 0;
            for (int[] r : merged) {
                if (r[0] > next) complement.add(new int[] {next, r[0] - 1});
                next = r[1] + 1;
            }
            if (next <= MAX) complement.add(new int[] {next, MAX});
            merged = complement;
        }
        // Surrogates are not scalar values: take them out.
        List<int[]> scalars = new ArrayList<>();
        for (int[] r : merged) {
            if (r[1] < 0xD800 || r[0] > 0xDFFF) {
                scalars.add(r);
                continue;
            }
            if (r[0] < 0xD800) scalars.add(new int[] {r[0], 0xD7FF});
            if (r[1] > 0xDFFF) scalars.add(new int[] {0xE000, r[1]});
        }
        int[] flat = new int[scalars.size() * 2];
        for (int i = 0; i < scalars.size(); i++) {
            flat[2 * i] = scalars.get(i)[0];
            flat[2 * i + 1] = Math.min(scalars.get(i)[1], MAX);
        }
        return new CodePointSet(flat);
    }

    boolean isEmpty() {
        return ranges.length == 0;
    }

    boolean contains(int c) {
        if (c < 64) return (asciiLow >>> c & 1) != 0;
        if (c < 128) return (asciiHigh >>> (c - 64) & 1) != 0;
        return intersects(c, c);
    }

    /** Whether every code point in [lo, hi] is a member. */
    boolean containsAll(int lo, int hi) {
        for (int i = 0; i < ranges.length; i += 2) {
            if (ranges[i + 1] >= lo) return ranges[i] <= lo && ranges[i + 1] >= hi;
        }
        return false;
    }

    /** Whether some member lies in [lo, hi]. */
    boolean intersects(int lo, int hi) {
        for (int i = 0; i < ranges.length; i += 2) {
            if (ranges[i] > hi) return false;
            if (ranges[i + 1] >= lo) return true;
        }
        return false;
    }
}
