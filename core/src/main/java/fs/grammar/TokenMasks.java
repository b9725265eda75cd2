package fs.grammar;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which tokens of a vocabulary a grammar allows in a state, for one grammar and one vocabulary, shared by all the
 * requests that use them. What a head allows is the same wherever its rule is used, except for the tokens that run on
 * past the rule's end: so each head's tokens are tabulated once, by a walk of the vocabulary's trie (each shared
 * prefix stepped once, a dead prefix's subtree skipped), as accepted or as depending on the callers; in a given state
 * only the latter are checked again, one by one, with the grammar's cached byte transitions. The answer for each
 * state is kept too (up to a bound), since generation comes back to the same states again and again.
 */
final class TokenMasks {
    private static final int MAX_CACHED_STATES = 256;
    /** Beyond this many tokens to check in context, a state is walked on its own instead. */
    private static final int MAX_DEPENDENTS = 2048;

    /** What a head allows whatever its callers, and the tokens that run past its rule's end (to check in context). */
    private record HeadTokens(long[] accepted, int[] dependOnCallers) {}

    /** A walk's result; for a state with all its callers known, nothing depends on callers. */
    private record Walk(long[] accepted, IntBuffer dependOnCallers) {
        HeadTokens tokens() {
            return new HeadTokens(accepted, dependOnCallers.toArray());
        }
    }

    private final Grammar grammar;
    private final TokenVocabulary vocabulary;
    private final int words;
    private final Map<Long, HeadTokens> byHead = new ConcurrentHashMap<>();
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
        HeadTokens[] tables = new HeadTokens[s.heads.length];
        int dependents = 0;
        for (int i = 0; i < tables.length; i++) {
            Head h = s.heads[i];
            tables[i] = byHead.computeIfAbsent((long) h.edge << 32 | (h.partial & 0xFFFFFFFFL),
                    key -> walk(grammar.intern(GrammarState.ofHead(h.edge, h.partial))).tokens());
            dependents += tables[i].dependOnCallers.length;
        }
        // Many tokens to check one by one (heads in small rules, such as whitespace, leave most of their tokens to
        // the callers): one walk of the trie from the state itself is then cheaper.
        long[] bits = dependents > MAX_DEPENDENTS ? walk(s).accepted : new long[words];
        if (dependents <= MAX_DEPENDENTS) {
            for (HeadTokens tokens : tables) {
                long[] accepted = tokens.accepted;
                for (int i = 0; i < words; i++) bits[i] |= accepted[i];
            }
            for (HeadTokens tokens : tables) {
                for (int t : tokens.dependOnCallers) {
                    if ((bits[t >>> 6] >>> t & 1) == 0 && advance(s, t) != GrammarState.DEAD) bits[t >>> 6] |= 1L << t;
                }
            }
        }
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

    /**
     * Walks the trie from a state: a token is accepted if it leaves a head alive or ends exactly where a rule of
     * unknown callers does (whatever the callers, they can go on from there); it depends on the callers if it runs on
     * past that rule's end; else it is refused.
     */
    private Walk walk(GrammarState start) {
        TokenVocabulary v = vocabulary;
        long[] accepted = new long[words];
        IntBuffer depend = new IntBuffer();
        GrammarState[] at = new GrammarState[v.maxDepth + 1];
        boolean[] passedEnd = new boolean[v.maxDepth + 1];
        at[0] = start;
        byte[] nodeByte = v.nodeByte;
        int[] nodeDepth = v.nodeDepth, subtreeEnd = v.subtreeEnd, nodeToken = v.nodeToken, sameBytes = v.sameBytes;
        int nodes = nodeByte.length;
        int k = 0;
        while (k < nodes) {
            int d = nodeDepth[k];
            GrammarState from = at[d - 1];
            GrammarState[] table = from.next;
            GrammarState next = table != null ? table[nodeByte[k] & 0xFF] : grammar.next(from, nodeByte[k] & 0xFF);
            boolean passed = passedEnd[d - 1] || next.passedRuleEnd;
            boolean alive = next.heads.length > 0;
            if (alive || next.passedRuleEnd || next.canEnd) {
                for (int t = nodeToken[k]; t >= 0; t = sameBytes[t]) accepted[t >>> 6] |= 1L << t;
            } else if (passedEnd[d - 1]) {
                for (int t = nodeToken[k]; t >= 0; t = sameBytes[t]) depend.add(t);
            }
            if (alive) {
                at[d] = next;
                passedEnd[d] = passed;
                k++;
                continue;
            }
            if (passed) {
                for (int j = k + 1; j < subtreeEnd[k]; j++) {
                    for (int t = nodeToken[j]; t >= 0; t = sameBytes[t]) depend.add(t);
                }
            }
            k = subtreeEnd[k];
        }
        return new Walk(accepted, depend);
    }

    private static final class IntBuffer {
        private int[] items = new int[64];
        private int size;

        void add(int value) {
            if (size == items.length) items = Arrays.copyOf(items, size * 2);
            items[size++] = value;
        }

        int[] toArray() {
            return Arrays.copyOf(items, size);
        }
    }
}
