package fs.tokenizer;

/**
 * A hand-compiled matcher for the Split regex of Qwen2, Qwen2.5 and Qwen3,
 * {@code (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+},
 * used when tokenizer.json names exactly that regex. It cuts text into the same pieces as java.util.regex does with
 * {@link PreTokenizer#compile} (tested on random text), several times faster: the regex engine tries each alternative,
 * case-folding included, at every position.
 */
final class QwenSplitPattern {
    static final String REGEX =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    private static final byte LETTER = 1;
    private static final byte NUMBER = 2;
    private static final byte SPACE = 3;
    private static final byte OTHER = 4;
    private static final byte[] ASCII = new byte[128];

    static {
        for (int c = 0; c < 128; c++) ASCII[c] = classify(c);
    }

    private QwenSplitPattern() {}

    /** The end of the piece that starts at {@code i}. */
    static int pieceEnd(String text, int i) {
        int length = text.length();
        int c = text.codePointAt(i);
        int next = i + Character.charCount(c);
        byte kind = kind(c);

        // (?i:'s|'t|'re|'ve|'m|'ll|'d)
        if (c == '\'' && next < length) {
            int end = contractionEnd(text, next);
            if (end > 0) return end;
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+
        if (kind == LETTER) return skip(text, next, LETTER);
        if (c != '\r' && c != '\n' && kind != NUMBER && next < length && kind(text.codePointAt(next)) == LETTER) {
            return skip(text, next, LETTER);
        }
        // \p{N}
        if (kind == NUMBER) return next;
        // " ?[^\s\p{L}\p{N}]+[\r\n]*"
        int punctuation = kind == OTHER ? i : c == ' ' && next < length && kind(text.codePointAt(next)) == OTHER ? next : -1;
        if (punctuation >= 0) {
            int end = skip(text, punctuation, OTHER);
            while (end < length && (text.charAt(end) == '\r' || text.charAt(end) == '\n')) end++;
            return end;
        }
        // Only whitespace is left. \s*[\r\n]+ ends after the run's last line break, if it has one.
        int runEnd = skip(text, i, SPACE);
        for (int k = runEnd - 1; k >= i; k--) {
            if (text.charAt(k) == '\r' || text.charAt(k) == '\n') return k + 1;
        }
        // \s+(?!\S) leaves the run's last space to the next piece when something follows; \s+ takes a lone space.
        if (runEnd == length || runEnd - 1 == i) return runEnd;
        return runEnd - 1; // White_Space characters are all in the BMP
    }

    /** The end of a contraction after the apostrophe at {@code from - 1}, or -1. */
    private static int contractionEnd(String text, int from) {
        for (String suffix : new String[] {"s", "t", "re", "ve", "m", "ll", "d"}) {
            int at = from;
            boolean matched = true;
            for (int k = 0; k < suffix.length() && matched; k++) {
                if (at >= text.length()) {
                    matched = false;
                } else {
                    int c = text.codePointAt(at);
                    // java.util.regex's Unicode case-insensitive test: ſ matches s, for one.
                    matched = c == suffix.charAt(k) || Character.toLowerCase(Character.toUpperCase(c)) == suffix.charAt(k);
                    at += Character.charCount(c);
                }
            }
            if (matched) return at;
        }
        return -1;
    }

    private static int skip(String text, int from, byte kind) {
        int i = from;
        while (i < text.length()) {
            int c = text.codePointAt(i);
            if (kind(c) != kind) break;
            i += Character.charCount(c);
        }
        return i;
    }

    private static byte kind(int c) {
        return c < 128 ? ASCII[c] : classify(c);
    }

    /** \p{L}, \p{N}, \s (Unicode White_Space, as java.util.regex and Oniguruma define it) or anything else. */
    private static byte classify(int c) {
        int type = Character.getType(c);
        return switch (type) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                    Character.MODIFIER_LETTER, Character.OTHER_LETTER -> LETTER;
            case Character.DECIMAL_DIGIT_NUMBER, Character.LETTER_NUMBER, Character.OTHER_NUMBER -> NUMBER;
            case Character.SPACE_SEPARATOR, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> SPACE;
            default -> (c >= 0x9 && c <= 0xD) || c == 0x85 ? SPACE : OTHER;
        };
    }
}
