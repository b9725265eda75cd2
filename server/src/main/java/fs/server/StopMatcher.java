package fs.server;

import java.util.List;

/**
 * Finds stop strings in text that arrives in pieces, and never lets part of one out: text that may be the start of a
 * stop string is held back until it is proven not to be, so a client never sees a stop string, whole or split.
 */
final class StopMatcher {
    private final List<String> stops;
    private final StringBuilder pending = new StringBuilder();
    private boolean stopped;

    StopMatcher(List<String> stops) {
        this.stops = List.copyOf(stops);
    }

    /**
     * The part of everything pushed so far that can be shown now. Once a stop string appears, returns the text before
     * it, {@link #stopped()} turns true, and everything after is dropped.
     */
    String push(String piece) {
        if (stopped) return "";
        pending.append(piece);
        if (stops.isEmpty()) return take(pending.length());
        int first = -1;
        for (String stop : stops) {
            int at = pending.indexOf(stop);
            if (at >= 0 && (first < 0 || at < first)) first = at;
        }
        if (first >= 0) {
            stopped = true;
            String before = pending.substring(0, first);
            pending.setLength(0);
            return before;
        }
        return take(pending.length() - heldBack());
    }

    /** Whether a stop string was found. */
    boolean stopped() {
        return stopped;
    }

    /** What was held back, at the end of the text: it never became a stop string. */
    String flush() {
        return stopped ? "" : take(pending.length());
    }

    /** Length of the longest suffix of pending that is a proper prefix of some stop string. */
    private int heldBack() {
        int longest = 0;
        for (String stop : stops) {
            for (int n = Math.min(stop.length() - 1, pending.length()); n > longest; n--) {
                if (endsWith(pending, stop, n)) {
                    longest = n;
                    break;
                }
            }
        }
        return longest;
    }

    /** Whether text ends with the first n chars of s. */
    private static boolean endsWith(CharSequence text, String s, int n) {
        int offset = text.length() - n;
        for (int i = 0; i < n; i++) {
            if (text.charAt(offset + i) != s.charAt(i)) return false;
        }
        return true;
    }

    private String take(int length) {
        String text = pending.substring(0, length);
        pending.delete(0, length);
        return text;
    }
}
