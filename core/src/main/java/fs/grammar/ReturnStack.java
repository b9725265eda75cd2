package fs.grammar;

/**
 * Where to go on once the rule being matched ends: the states to resume in the rules that called it, innermost first.
 * Immutable and shared between the stacks that branched from it; equal when they hold the same states.
 */
final class ReturnStack {
    /**
     * Stands for callers not known: what a rule's heads allow is computed once for every place the rule is used, and
     * a token that runs on past the rule's end is then decided with the real stack.
     */
    static final ReturnStack UNKNOWN_CALLERS = new ReturnStack(-1, null);

    final int state;
    final ReturnStack below; // null: the start rule's caller, the end of the text
    private final int hash;

    ReturnStack(int state, ReturnStack below) {
        this.state = state;
        this.below = below;
        this.hash = 31 * (below == null ? 0 : below.hash) + state;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof ReturnStack other) || other.hash != hash) return false;
        ReturnStack a = this, b = other;
        while (a != null && b != null) {
            if (a == b) return true;
            if (a.state != b.state || a.hash != b.hash) return false;
            a = a.below;
            b = b.below;
        }
        return a == b;
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
