package fs.generate;

import java.util.List;

/**
 * Text that arrives in pieces and is searched for markers (a think tag, a stop string, a tool-call tag) that a split
 * may cut in two: what may still be the start of a marker is held back until the next piece decides it. The one
 * hold-back rule of the streaming matchers ({@link ThinkFilter}, {@link ReasoningSplitter}, {@link ToolCallSplitter},
 * fs serve's stop strings). Not thread-safe.
 */
public final class HeldBackText {
    private final StringBuilder text = new StringBuilder();

    /** Appends a piece. */
    public void append(String piece) {
        text.append(piece);
    }

    public int length() {
        return text.length();
    }

    public char charAt(int index) {
        return text.charAt(index);
    }

    /** Where {@code marker} first occurs at or after {@code from}, or -1. */
    public int indexOf(String marker, int from) {
        return text.indexOf(marker, from);
    }

    /** Where the first of {@code markers} to occur begins, or -1. */
    public int indexOfFirst(List<String> markers) {
        int first = -1;
        for (String marker : markers) {
            int at = text.indexOf(marker);
            if (at >= 0 && (first < 0 || at < first)) first = at;
        }
        return first;
    }

    /** The length of the longest tail that is a proper start of one of {@code markers} (0: none is). */
    public int partialMarker(List<String> markers) {
        int longest = 0;
        for (String marker : markers) {
            for (int n = Math.min(marker.length() - 1, text.length()); n > longest; n--) {
                if (endsWith(marker, n)) {
                    longest = n;
                    break;
                }
            }
        }
        return longest;
    }

    /** Whether the text ends with the first {@code n} chars of {@code s}. */
    public boolean endsWith(String s, int n) {
        int offset = text.length() - n;
        if (offset < 0) return false;
        for (int i = 0; i < n; i++) {
            if (text.charAt(offset + i) != s.charAt(i)) return false;
        }
        return true;
    }

    /** Removes and returns the first {@code n} chars. */
    public String take(int n) {
        String taken = text.substring(0, n);
        text.delete(0, n);
        return taken;
    }

    /** Removes and returns all but the last {@code keep} chars. */
    public String takeAllBut(int keep) {
        return take(text.length() - keep);
    }

    /** Removes and returns everything. */
    public String takeAll() {
        return take(text.length());
    }

    /** Drops the first {@code n} chars. */
    public void drop(int n) {
        text.delete(0, n);
    }

    /** What is held now (for a pattern to look at; it stays held). */
    @Override
    public String toString() {
        return text.toString();
    }
}
