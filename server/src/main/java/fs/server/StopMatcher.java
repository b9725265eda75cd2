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
    private String matched; // the stop string found; null until one is

    StopMatcher(List<String> stops) {
        this.stops = List.copyOf(stops);
    }

    /**
     * The part of everything pushed so far that can be shown now. Once a stop string appears, returns the text before
     * it, {@link #stopped()} turns true, and everything after is dropped.
     */
    String push(String piece) {
        if (stopped()) return "";
        pending.append(piece);
        int first = pending.indexOfFirst(stops);
        if (first >= 0) {
            String text = pending.toString();
            // Of stops that begin at the same place (e.g. "lo" and "low"), the first given is the one reported.
            matched = stops.stream().filter(stop -> text.startsWith(stop, first)).findFirst().orElseThrow();
            String before = pending.take(first);
            pending.takeAll();
            return before;
        }
        return pending.takeAllBut(pending.partialMarker(stops));
    }

    /** Whether a stop string was found. */
    boolean stopped() {
        return matched != null;
    }

    /** The stop string found (as the request gave it), or null while none is. */
    String matched() {
        return matched;
    }

    /** What was held back, at the end of the text: it never became a stop string. */
    String flush() {
        return stopped() ? "" : pending.takeAll();
    }
}
