package fs.chat.constraint;

import fs.grammar.Grammar;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The grammars compiled lately, by their GBNF text: clients send the same tools and schemas again and again, and a
 * compiled grammar keeps the token tables its constraints built, so the next request that asks for it starts at
 * once. Holds a few, the least recently used dropped first. Thread-safe.
 */
public final class GrammarCache {
    private final Map<String, Grammar> grammars;

    /** A cache of at most {@code size} grammars. */
    public GrammarCache(int size) {
        grammars = new LinkedHashMap<>(size, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Grammar> eldest) {
                return size() > size;
            }
        };
    }

    /**
     * The grammar of {@code gbnf}, compiled now or earlier.
     *
     * @throws fs.grammar.GrammarException when it is not a grammar
     */
    public Grammar compiled(String gbnf) {
        synchronized (grammars) {
            Grammar kept = grammars.get(gbnf);
            if (kept != null) return kept;
        }
        Grammar grammar = Grammar.parse(gbnf); // outside the lock: compiling takes a while
        synchronized (grammars) {
            grammars.put(gbnf, grammar);
        }
        return grammar;
    }
}
