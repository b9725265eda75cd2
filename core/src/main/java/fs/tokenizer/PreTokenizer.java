package fs.tokenizer;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Splits normalized text into the pieces BPE encodes, applying each Split regex of tokenizer.json in turn with the
 * "Isolated" behaviour: every match is a piece and so is every stretch of text between matches.
 */
final class PreTokenizer {
    /** One Split step: java.util.regex, or null where {@link QwenSplitPattern} stands in for the regex. */
    private final List<Pattern> patterns;

    PreTokenizer(List<Pattern> patterns) {
        this.patterns = patterns.stream().map(p -> p.pattern().equals(QwenSplitPattern.REGEX) ? null : p).toList();
    }

    /**
     * The longest Split pattern accepted, 30 times Qwen3's: compiling a long literal costs the JDK time quadratic
     * in its length (a 47,000-character one took 8 s), and no pre-tokenizer needs one.
     */
    static final int MAX_PATTERN_CHARS = 4096;

    /**
     * Compiles a tokenizer.json regex with the Unicode semantics of Hugging Face's Oniguruma: \s, \w, \d and
     * case-insensitive groups follow Unicode, not ASCII.
     */
    static Pattern compile(String regex) {
        return Pattern.compile(regex, Pattern.UNICODE_CHARACTER_CLASS | Pattern.UNICODE_CASE);
    }

    /** Receives each piece as a range of a text, so that no substring is made for a piece the cache knows. */
    interface PieceSink {
        void piece(String text, int start, int end);
    }

    void split(String text, PieceSink pieces) {
        split(text, 0, pieces);
    }

    private void split(String text, int level, PieceSink pieces) {
        if (level == patterns.size()) {
            pieces.piece(text, 0, text.length());
            return;
        }
        boolean last = level == patterns.size() - 1;
        Pattern pattern = patterns.get(level);
        if (pattern == null) {
            for (int start = 0, end; start < text.length(); start = end) {
                end = QwenSplitPattern.pieceEnd(text, start);
                if (last) pieces.piece(text, start, end);
                else split(text.substring(start, end), level + 1, pieces);
            }
            return;
        }
        Matcher matcher = pattern.matcher(text);
        int previousEnd = 0;
        while (matcher.find()) {
            int start = matcher.start();
            int end = matcher.end();
            if (end == start) continue;
            if (start > previousEnd) emit(text, previousEnd, start, level, pieces);
            emit(text, start, end, level, pieces);
            previousEnd = end;
        }
        if (previousEnd < text.length()) emit(text, previousEnd, text.length(), level, pieces);
    }

    private void emit(String text, int start, int end, int level, PieceSink pieces) {
        if (level == patterns.size() - 1) pieces.piece(text, start, end);
        else split(text.substring(start, end), level + 1, pieces);
    }
}
