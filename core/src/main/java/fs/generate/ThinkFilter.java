package fs.generate;

import java.util.List;

/**
 * Removes {@code <think>…</think>} blocks, and the whitespace after them, from text that arrives in pieces: a tag
 * split across pieces is held back until it is complete or proven not to be a tag.
 */
public final class ThinkFilter {
    private static final String OPEN = "<think>";
    private static final String CLOSE = "</think>";

    private final HeldBackText pending = new HeldBackText();
    private boolean thinking;
    private boolean skipWhitespace;

    /** The part of everything pushed so far that can be shown now. */
    public String push(String piece) {
        pending.append(piece);
        StringBuilder visible = new StringBuilder();
        while (true) {
            String tag = thinking ? CLOSE : OPEN;
            int at = pending.indexOf(tag, 0);
            if (at >= 0) {
                String before = pending.take(at);
                if (!thinking) show(visible, before);
                pending.drop(tag.length());
                thinking = !thinking;
                if (!thinking) skipWhitespace = true;
                continue;
            }
            // Keep a tail that may be the start of the tag; the rest is decided.
            String decided = pending.takeAllBut(pending.partialMarker(List.of(tag)));
            if (!thinking) show(visible, decided);
            return visible.toString();
        }
    }

    /** What is left at the end of the text: a held-back partial tag outside a think block. */
    public String flush() {
        StringBuilder visible = new StringBuilder();
        String rest = pending.takeAll();
        if (!thinking) show(visible, rest);
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
}
