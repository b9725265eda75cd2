package fs.server;

import fs.generate.HeldBackText;
import java.util.List;

/**
 * Finds stop strings in text that arrives in pieces, and never lets part of one out: text that may be the start of a
 * stop string is held back until it is proven not to be, so a client never sees a stop string, whole or split.
 */
final class StopMatcher {
    private final List<String> stops;
    private final HeldBackText pending = new HeldBackText();
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
        int first = pending.indexOfFirst(stops);
        if (first >= 0) {
            stopped = true;
            String before = pending.take(first);
            pending.takeAll();
            return before;
        }
        return pending.takeAllBut(pending.partialMarker(stops));
    }

    /** Whether a stop string was found. */
    boolean stopped() {
        return stopped;
    }

    /** What was held back, at the end of the text: it never became a stop string. */
    String flush() {
        return stopped ? "" : pending.takeAll();
    }
}
