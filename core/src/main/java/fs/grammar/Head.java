package fs.grammar;

/**
 * One way the text read so far can go on: the next code point is read by {@code edge} (one of a set), of which the
 * first bytes may already be read ({@code partial}), and then the matcher goes on in the edge's target state, then in
 * {@code returns}.
 */
final class Head {
    final int edge;
    /** A code point begun but not finished: 0 for none, else {@link Utf8Progress}'s encoding. */
    final int partial;
    final ReturnStack returns;
    private final int hash;

    Head(int edge, int partial, ReturnStack returns) {
        this.edge = edge;
        this.partial = partial;
        this.returns = returns;
        this.hash = (edge * 31 + partial) * 31 + (returns == null ? 0 : returns.hashCode());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Head h && h.hash == hash && h.edge == edge && h.partial == partial
                && java.util.Objects.equals(h.returns, returns);
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
