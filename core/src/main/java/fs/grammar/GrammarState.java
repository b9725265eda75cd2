package fs.grammar;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Where a grammar's matcher stands after some bytes: every way the text can go on ({@link Head}s, as in a pushdown
 * automaton's set of stacks), whether the text may end here, and whether the last byte ended a rule whose callers are
 * {@link ReturnStack#UNKNOWN_CALLERS unknown}. Immutable and equal when the same, apart from a cache
 * of the states that follow each byte, filled in as the grammar's {@link Grammar#next} is asked: states that come
 * back (generation returns to the same places again and again) are one object each, so the matcher becomes a
 * deterministic automaton built as it goes.
 */
final class GrammarState {
    private static final Comparator<Head> ORDER = Comparator.<Head>comparingInt(h -> h.edge)
            .thenComparingInt(h -> h.partial).thenComparingInt(Head::hashCode);

    /**
     * The most ways to read the text at once. An ambiguous grammar (repetitions of rules that may match nothing,
     * nested) can have their number grow exponentially with the text; past this bound it is refused, rather than
     * the matcher slowing to a halt.
     */
    static final int MAX_HEADS = 2048;

    static final GrammarState DEAD = new GrammarState(new Head[0], false, false);

    final Head[] heads;
    final boolean canEnd;
    final boolean passedRuleEnd;
    private final int hash;
    /**
     * The state after each byte, once asked: the table is filled whole, then published (volatile, so a thread that
     * sees the table sees its entries) by whichever thread computed it first; two threads computing it compute equal
     * tables, and either one is right.
     */
    volatile GrammarState[] next;

    private GrammarState(Head[] heads, boolean canEnd, boolean passedRuleEnd) {
        this.heads = heads;
        this.canEnd = canEnd;
        this.passedRuleEnd = passedRuleEnd;
        this.hash = Arrays.hashCode(heads) * 4 + (canEnd ? 2 : 0) + (passedRuleEnd ? 1 : 0);
    }

    /** The state of one head alone, whose rule's callers are unknown. */
    static GrammarState ofHead(int edge, int partial) {
        return new GrammarState(new Head[] {new Head(edge, partial, ReturnStack.UNKNOWN_CALLERS)}, false, false);
    }

    /** The state before any byte of the start rule. */
    static GrammarState start(Grammar grammar) {
        Expansion out = new Expansion();
        out.expand(grammar, grammar.ruleStart[grammar.root], null);
        return out.state(true);
    }

    boolean isDead() {
        return heads.length == 0 && !canEnd && !passedRuleEnd;
    }

    /** {@link #outcome}: the head does not take the byte. */
    static final int DIES = -1;
    /** {@link #outcome}: the byte completes a code point of the head's set. */
    static final int COMPLETES = -2;

    /**
     * What head {@code h} does with byte {@code b}: {@link #DIES}, {@link #COMPLETES}, or the progress (&ge; 0) of a
     * code point begun. Bytes with the same outcomes for every head lead to the same state.
     */
    static int outcome(Grammar grammar, Head h, int b) {
        CodePointSet set = grammar.edgeSet[h.edge];
        int progress;
        if (h.partial == 0) {
            if (b < 0x80) return set.contains(b) ? COMPLETES : DIES;
            progress = Utf8Progress.lead(b);
        } else {
            progress = Utf8Progress.next(h.partial, b);
            if (progress >= 0 && Utf8Progress.complete(progress)) {
                return Utf8Progress.completesIn(progress, set) ? COMPLETES : DIES;
            }
        }
        return progress >= 0 && Utf8Progress.possible(progress, set) ? Utf8Progress.normalize(progress, set) : DIES;
    }

    /** The state after a byte whose outcome for each head is {@code outcomes} (see {@link Grammar#next}, cached). */
    GrammarState advance(Grammar grammar, int[] outcomes) {
        Expansion out = new Expansion();
        for (int i = 0; i < heads.length; i++) {
            Head h = heads[i];
            if (outcomes[i] == COMPLETES) out.expand(grammar, grammar.edgeTarget[h.edge], h.returns);
            else if (outcomes[i] != DIES) out.add(new Head(h.edge, outcomes[i], h.returns));
        }
        return out.state(true);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GrammarState s && s.hash == hash && s.canEnd == canEnd && s.passedRuleEnd == passedRuleEnd
                && Arrays.equals(s.heads, heads);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /** Collects the heads reached from states by calls and rule ends, without reading anything. */
    private static final class Expansion {
        private final List<Head> heads = new ArrayList<>(4);
        private Set<Head> headSet; // once there are many
        private final Set<Visit> visited = new HashSet<>();
        private boolean canEnd;
        private boolean passedRuleEnd;

        private record Visit(int state, ReturnStack returns) {}

        void add(Head h) {
            if (headSet == null) {
                if (heads.contains(h)) return;
                heads.add(h);
                if (heads.size() > 8) headSet = new HashSet<>(heads);
            } else if (headSet.add(h)) {
                heads.add(h);
                if (heads.size() > MAX_HEADS) {
                    throw new GrammarException("grammar too ambiguous: over " + MAX_HEADS + " ways to read the text at "
                            + "once (nested repetitions of rules that may match nothing?)");
                }
            }
        }

        /** Adds what can come from state {@code q} with {@code returns} below it. */
        void expand(Grammar g, int q, ReturnStack returns) {
            if (!visited.add(new Visit(q, returns))) return;
            for (int e : g.stateEdges[q]) add(new Head(e, 0, returns));
            int[] calls = g.stateCalls[q];
            for (int i = 0; i < calls.length; i += 2) {
                expand(g, g.ruleStart[calls[i]], new ReturnStack(calls[i + 1], returns));
            }
            if (g.stateFinal[q]) {
                if (returns == null) canEnd = true;
                else if (returns == ReturnStack.UNKNOWN_CALLERS) passedRuleEnd = true;
                else expand(g, returns.state, returns.below);
            }
        }

        /** The state of what was collected, its heads in one order so that equal states compare equal. */
        GrammarState state(boolean canonical) {
            if (heads.isEmpty() && !canEnd && !passedRuleEnd) return DEAD;
            Head[] sorted = heads.toArray(Head[]::new);
            if (canonical) Arrays.sort(sorted, ORDER);
            return new GrammarState(sorted, canEnd, passedRuleEnd);
        }
    }
}
