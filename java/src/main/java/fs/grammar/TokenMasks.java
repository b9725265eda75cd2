package fs.grammar;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which tokens of a vocabulary a grammar allows in a state, for one grammar and one vocabulary, shared by all the
 * requests that use them. What a head allows is the same wherever its rule is used, except for the tokens that run
 * past the rule's end: so each head's tokens are tabulated once, by a walk of the vocabulary's trie, as accepted or
 * as depending on the callers; in a given state only the latter are checked again, one by one. The full answer for a
 * state is kept too, up to a bound, since generation comes back to the same states again and again.
 */
final class TokenMasks {
    private static final int MAX_CACHED_STATES = 512;

    /** The tokens a head allows whatever its callers, and those that run past its rule's end (to check in context). */
    record HeadTokens(long[] accepted, int[] dependOnCallers) {}

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
        long[] bits = new long[words];
        IntBuffer candidates = new IntBuffer();
        for (Head h : s.heads) {
            HeadTokens tokens = byHead.computeIfAbsent((long) h.edge << 32 | (h.partial & 0xFFFFFFFFL),
                    key -> walk(GrammarState.ofHead(h.edge, h.partial)));
            for (int i = 0; i < words; i++) bits[i] |= tokens.accepted[i];
            candidates.addAll(tokens.dependOnCallers);
        }
        for (int i = 0; i < candidates.size; i++) {
            int t = candidates.items[i];
            if ((bits[t >>> 6] >>> t & 1) == 0 && s.advance(grammar, vocabulary.bytes(t)) != null) bits[t >>> 6] |= 1L << t;
        }
        if (byState.size() < MAX_CACHED_STATES) byState.put(s, bits);
        return bits;
    }

    /** Whether token {@code t}'s bytes may come next in state {@code s}. */
    boolean allows(GrammarState s, int t) {
        byte[] bytes = vocabulary.bytes(t);
        return bytes != null && bytes.length > 0 && s.advance(grammar, bytes) != null;
    }

    /** The state after token {@code t}; null if it may not come next. */
    GrammarState advance(GrammarState s, int t) {
        byte[] bytes = vocabulary.bytes(t);
        if (bytes == null || bytes.length == 0) return null;
        GrammarState next = s.advance(grammar, bytes);
        return next == null ? null : next.canonical();
    }

    /**
     * Walks the trie from {@code start}: a token is accepted if it leaves a head alive or ends exactly where the rule
     * does; it depends on the callers if it runs on past the rule's end; else it is refused.
     */
    private HeadTokens walk(GrammarState start) {
        TokenVocabulary v = vocabulary;
        long[] accepted = new long[words];
        IntBuffer depend = new IntBuffer();
        GrammarState[] at = new GrammarState[v.maxDepth + 1];
        boolean[] passedEnd = new boolean[v.maxDepth + 1];
        at[0] = start;
        int nodes = v.nodeCount();
        int k = 0;
        while (k < nodes) {
            int d = v.nodeDepth[k];
            GrammarState next = at[d - 1].advance(grammar, v.nodeByte[k] & 0xFF);
            boolean passed = passedEnd[d - 1] || next.passedRuleEnd;
            boolean alive = next.heads.length > 0;
            if (alive || next.canEnd || next.passedRuleEnd) {
                for (int t = v.nodeToken[k]; t >= 0; t = v.sameBytes[t]) accepted[t >>> 6] |= 1L << t;
            } else if (passedEnd[d - 1]) {
                for (int t = v.nodeToken[k]; t >= 0; t = v.sameBytes[t]) depend.add(t);
            }
            if (alive) {
                at[d] = next;
                passedEnd[d] = passed;
                k++;
                continue;
            }
            if (passed) {
                for (int j = k + 1; j < v.subtreeEnd[k]; j++) {
                    for (int t = v.nodeToken[j]; t >= 0; t = v.sameBytes[t]) depend.add(t);
                }
            }
            k = v.subtreeEnd[k];
        }
        return new HeadTokens(accepted, depend.toArray());
    }

    private static final class IntBuffer {
        int[] items = new int[16];
        int size;

        void add(int value) {
            if (size == items.length) items = Arrays.copyOf(items, size * 2);
            items[size++] = value;
        }

        void addAll(int[] values) {
            if (size + values.length > items.length) items = Arrays.copyOf(items, Math.max(size * 2, size + values.length));
            System.arraycopy(values, 0, items, size, values.length);
            size += values.length;
        }

        int[] toArray() {
            return Arrays.copyOf(items, size);
        }
    }
}
