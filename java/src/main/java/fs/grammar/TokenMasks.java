package fs.grammar;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which tokens of a vocabulary a grammar allows in a state, for one grammar and one vocabulary, shared by all the
 * requests that use them. The answer for a state is one walk of the vocabulary's trie, each shared prefix stepped
 * once and a dead prefix's whole subtree skipped, with the grammar's cached byte transitions; the answers are kept
 * for the states met (up to a bound), since generation comes back to the same states again and again.
 */
final class TokenMasks {
    private static final int MAX_CACHED_STATES = 1024;

    private final Grammar grammar;
    private final TokenVocabulary vocabulary;
    private final int words;
    private final Map<GrammarState, long[]> byState = new ConcurrentHashMap<>();

    TokenMasks(Grammar grammar, TokenVocabulary vocabulary) {
        this.grammar = grammar;
        this.vocabulary = vocabulary;
        this.words = (vocabulary.size() + 63) >>> 6;
    }

    /** The tokens with text that may come next in state {@code s}, as a bit set by id; the caller must not modify it. */
    long[] allowed(GrammarState s) {
        long[] cached = byState.get(s);
        if (cached != null) return cached;
        long[] bits = walk(s);
        if (byState.size() < MAX_CACHED_STATES) byState.put(s, bits);
        return bits;
    }

    /** Whether token {@code t}'s bytes may come next in state {@code s}. */
    boolean allows(GrammarState s, int t) {
        long[] cached = byState.get(s);
        if (cached != null) return t >= 0 && t < vocabulary.size() && (cached[t >>> 6] >>> t & 1) != 0;
        return advance(s, t) != GrammarState.DEAD;
    }

    /** The state after token {@code t}: {@link GrammarState#DEAD} if it may not come next. */
    GrammarState advance(GrammarState s, int t) {
        byte[] bytes = vocabulary.bytes(t);
        if (bytes == null || bytes.length == 0) return GrammarState.DEAD;
        return grammar.next(s, bytes);
    }

    private long[] walk(GrammarState start) {
        TokenVocabulary v = vocabulary;
        long[] accepted = new long[words];
        GrammarState[] at = new GrammarState[v.maxDepth + 1];
        at[0] = start;
        byte[] nodeByte = v.nodeByte;
        int[] nodeDepth = v.nodeDepth, subtreeEnd = v.subtreeEnd, nodeToken = v.nodeToken, sameBytes = v.sameBytes;
        int nodes = nodeByte.length;
        int k = 0;
        while (k < nodes) {
            GrammarState s = at[nodeDepth[k] - 1];
            GrammarState next = grammar.next(s, nodeByte[k] & 0xFF);
            if (next == GrammarState.DEAD) {
                k = subtreeEnd[k];
                continue;
            }
            for (int t = nodeToken[k]; t >= 0; t = sameBytes[t]) accepted[t >>> 6] |= 1L << t;
            if (next.heads.length == 0) {
                k = subtreeEnd[k]; // the text is complete: nothing may follow
                continue;
            }
            at[nodeDepth[k]] = next;
            k++;
        }
        return accepted;
    }
}
