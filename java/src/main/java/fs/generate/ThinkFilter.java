package fs.generate;

/**
 * Removes {@code <think>…</think>} blocks, and the whitespace after them, from text that arrives in pieces: a tag
 * split across pieces is held back until it is complete or proven not to be a tag.
 */
public final class ThinkFilter {
    private static final String OPEN = "<think>";
    private static final String CLOSE = "</think>";

    private final StringBuilder pending = new StringBuilder();
    private boolean thinking;
    private boolean skipWhitespace;

    /** The part of everything pushed so far that can be shown now. */
    public String push(String piece) {
        pending.append(piece);
        StringBuilder visible = new StringBuilder();
        while (true) {
            String tag = thinking ? CLOSE : OPEN;
            int at = pending.indexOf(tag);
            if (at >= 0) {
                if (!thinking) show(visible, pending.substring(0, at));
                pending.delete(0, at + tag.length());
                thinking = !thinking;
                if (!thinking) skipWhitespace = true;
                continue;
            }
            // Keep a tail that may be the start of the tag; the rest is decided.
            int keep = partialTagLength(tag);
            if (!thinking) show(visible, pending.substring(0, pending.length() - keep));
            pending.delete(0, pending.length() - keep);
            return visible.toString();
        }
    }

    /** What is left at the end of the text: a held-back partial tag outside a think block. */
    public String flush() {
        StringBuilder visible = new StringBuilder();
        if (!thinking) show(visible, pending.toString());
        pending.setLength(0);
        return visible.toString();
    }

    private void show(StringBuilder visible, String text) {
        if (skipWhitespace) {
            int i = 0;
            while (i < text.length() && Character.isWhitespace(text.charAt(i))) i++;
            text = text.substring(i);
            if (!text.isEmpty()) skipWhitespace = false;
        }
        visible.append(text);
    }

    /** Length of the longest suffix of pending that is a proper prefix of tag. */
    private int partialTagLength(String tag) {
        for (int n = Math.min(tag.length() - 1, pending.length()); n > 0; n--) {
            if (pending.substring(pending.length() - n).equals(tag.substring(0, n))) return n;
        }
        return 0;
    }
}
