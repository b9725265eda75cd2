package fs;

/**
 * A name or value read from a file, as a one-line message shows it. The file may hold line breaks, other control
 * characters or lone surrogates in it, and may be huge: echoed raw, a message would span lines or run to thousands of
 * characters. Every loader quotes through here, so all of them show such text the same way.
 */
public final class Quoted {
    /** Enough to recognise a name; past it the text is cut, with "…" to say so. */
    private static final int MAX_SHOWN = 60;

    private Quoted() {}

    /** {@code text} in single quotes, control characters and lone surrogates as {@code \\uXXXX}, cut at 60 characters. */
    public static String quote(String text) {
        StringBuilder quoted = new StringBuilder("'");
        int shown = 0;
        for (int i = 0; i < text.length(); i++) {
            if (shown >= MAX_SHOWN) return quoted.append("…'").toString();
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                quoted.append(c).append(text.charAt(++i)); // a pair is one character: never cut between its halves
            } else if (Character.isISOControl(c) || Character.isSurrogate(c) || c == '\u2028' || c == '\u2029') {
                quoted.append(String.format("\\u%04x", (int) c));
            } else {
                quoted.append(c);
            }
            shown++;
        }
        return quoted.append("'").toString();
    }
}
