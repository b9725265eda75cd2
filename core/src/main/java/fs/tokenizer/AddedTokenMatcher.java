package fs.tokenizer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Finds added tokens in a text, leftmost first and longest first at a position, as Hugging Face's matcher does. */
final class AddedTokenMatcher {
    private final Map<Character, AddedToken[]> byFirstChar = new HashMap<>();
    /** The first characters of the tokens: a cheap test for the common case of no token at a position. */
    private final boolean[] firstChars = new boolean[Character.MAX_VALUE + 1];

    AddedTokenMatcher(List<AddedToken> tokens) {
        Map<Character, List<AddedToken>> groups = new HashMap<>();
        for (AddedToken token : tokens) {
            if (token.content().isEmpty()) continue;
            groups.computeIfAbsent(token.content().charAt(0), c -> new ArrayList<>()).add(token);
        }
        groups.forEach((c, group) -> {
            group.sort(Comparator.comparingInt((AddedToken t) -> t.content().length()).reversed());
            byFirstChar.put(c, group.toArray(AddedToken[]::new));
            firstChars[c] = true;
        });
    }

    boolean isEmpty() {
        return byFirstChar.isEmpty();
    }

    /** Receives the text between added tokens and the added tokens themselves, in order. */
    interface Sink {
        void text(String text);

        void token(AddedToken token);
    }

    void split(String text, Sink sink) {
        int start = 0;
        int i = 0;
        while (i < text.length()) {
            AddedToken match = matchAt(text, i);
            if (match == null) {
                i++;
                continue;
            }
            if (i > start) sink.text(text.substring(start, i));
            sink.token(match);
            i += match.content().length();
            start = i;
        }
        if (start < text.length()) sink.text(start == 0 ? text : text.substring(start));
    }

    private AddedToken matchAt(String text, int i) {
        char c = text.charAt(i);
        if (!firstChars[c]) return null;
        AddedToken[] candidates = byFirstChar.get(c);
        for (AddedToken candidate : candidates) {
            if (text.startsWith(candidate.content(), i)) return candidate;
        }
        return null;
    }
}
