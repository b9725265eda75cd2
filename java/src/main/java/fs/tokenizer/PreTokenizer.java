package fs.tokenizer;

import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Splits normalized text into the pieces BPE encodes, applying each Split pattern of tokenizer.json in turn with the
 * "Isolated" behaviour: every match is a piece and so is every stretch of text between matches.
 */
final class PreTokenizer {
    private final List<Pattern> patterns;

    PreTokenizer(List<Pattern> patterns) {
        this.patterns = List.copyOf(patterns);
    }

    /**
     * Compiles a tokenizer.json regex with the Unicode semantics of Hugging Face's Oniguruma: \s, \w, \d and
     * case-insensitive groups follow Unicode, not ASCII.
     */
    static Pattern compile(String regex) {
        return Pattern.compile(regex, Pattern.UNICODE_CHARACTER_CLASS | Pattern.UNICODE_CASE);
    }

    void split(String text, Consumer<String> pieces) {
        split(text, 0, pieces);
    }

    private void split(String text, int level, Consumer<String> pieces) {
        if (level == patterns.size()) {
            pieces.accept(text);
            return;
        }
        Matcher matcher = patterns.get(level).matcher(text);
        int last = 0;
        while (matcher.find()) {
            int start = matcher.start();
            int end = matcher.end();
            if (end == start) continue;
            if (start > last) split(text.substring(last, start), level + 1, pieces);
            split(text.substring(start, end), level + 1, pieces);
            last = end;
        }
        if (last < text.length()) split(last == 0 ? text : text.substring(last), level + 1, pieces);
    }
}
