package fs.grammar;

import fs.generate.TokenConstraint;
import java.util.Arrays;

/**
 * Holds a generation to a grammar: a token is allowed when its bytes continue the text in the grammar; the end tokens
 * only where the grammar's text may end, and nothing else once it cannot go on. One per sequence: it keeps that
 * sequence's place in the grammar.
 */
public final class GrammarConstraint implements TokenConstraint {
    private final TokenMasks masks;
    private final int vocabularySize;
    private final int[] endTokens; // sorted
    private final int triggerToken; // -1: constrained from the start
    private boolean triggered;
    private GrammarState state;
    private boolean ended;

    public GrammarConstraint(Grammar grammar, TokenVocabulary vocabulary, int[] endTokens) {
        this(grammar, vocabulary, endTokens, -1);
    }

    private GrammarConstraint(Grammar grammar, TokenVocabulary vocabulary, int[] endTokens, int triggerToken) {
        if (endTokens.length == 0) throw new IllegalArgumentException("a grammar constraint needs at least one end token");
        this.masks = grammar.masks(vocabulary);
        this.vocabularySize = vocabulary.size();
        this.endTokens = endTokens.clone();
        Arrays.sort(this.endTokens);
        this.triggerToken = triggerToken;
        this.triggered = triggerToken < 0;
        this.state = grammar.start();
    }

    /**
     * A constraint that lets the model write freely until it emits {@code triggerToken} (such as &lt;tool_call&gt;),
     * then holds what follows that token to {@code grammar}.
     */
    public static GrammarConstraint triggered(Grammar grammar, TokenVocabulary vocabulary, int[] endTokens, int triggerToken) {
        if (triggerToken < 0) throw new IllegalArgumentException("trigger token " + triggerToken);
        return new GrammarConstraint(grammar, vocabulary, endTokens, triggerToken);
    }

    @Override
    public boolean allows(int token) {
        if (!triggered) return true;
        if (isEnd(token)) return ended || state.canEnd;
        return !ended && masks.allows(state, token);
    }

    @Override
    public void mask(float[] logits) {
        if (!triggered) return;
        // The end tokens' logits are set last: whether they are allowed does not depend on their text.
        float[] endLogits = new float[endTokens.length];
        for (int i = 0; i < endTokens.length; i++) if (endTokens[i] < logits.length) endLogits[i] = logits[endTokens[i]];
        long[] bits = ended ? null : masks.allowed(state);
        int n = logits.length;
        for (int base = 0; base < n; base += 64) {
            int word = base >>> 6;
            long w = bits != null && word < bits.length ? bits[word] : 0L;
            int limit = Math.min(64, n - base);
            if (w == 0L) {
                Arrays.fill(logits, base, base + limit, Float.NEGATIVE_INFINITY);
            } else if (w != -1L || limit < 64) {
                for (int j = 0; j < limit; j++) if ((w >>> j & 1) == 0) logits[base + j] = Float.NEGATIVE_INFINITY;
            }
        }
        boolean endsAllowed = ended || state.canEnd;
        for (int i = 0; i < endTokens.length; i++) {
            if (endTokens[i] < n) logits[endTokens[i]] = endsAllowed ? endLogits[i] : Float.NEGATIVE_INFINITY;
        }
    }

    @Override
    public void accept(int token) {
        if (!triggered) {
            triggered = token == triggerToken;
            return;
        }
        if (isEnd(token)) {
            if (!(ended || state.canEnd)) throw new IllegalArgumentException("end token " + token + " before the grammar may end");
            ended = true;
            return;
        }
        GrammarState next = ended ? GrammarState.DEAD : masks.advance(state, token);
        if (next == GrammarState.DEAD) throw new IllegalArgumentException("token " + token + " is not allowed by the grammar here");
        state = next;
    }

    private boolean isEnd(int token) {
        return Arrays.binarySearch(endTokens, token) >= 0;
    }
}
