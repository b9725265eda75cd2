package fs.generate;

/**
 * Which tokens a sequence may take next (a grammar, a JSON schema): the sampler picks among the allowed ones only.
 * One per sequence, stateful, touched only by the thread that samples that sequence.
 */
public interface TokenConstraint {
    /** Whether {@code token} may come next: the cheap check of the sampler's unconstrained pick. */
    boolean allows(int token);

    /** Sets the logit of every token that may not come next to negative infinity; at least one stays finite. */
    void mask(float[] logits);

    /** Advances past {@code token}, which {@link #allows} allowed. */
    void accept(int token);
}
