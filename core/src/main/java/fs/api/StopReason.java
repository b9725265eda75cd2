package fs.api;

/** Why an answer ended: the facade's own words, so that callers need nothing of fs's engine packages. */
public enum StopReason {
    /** The model ended its answer (its end token, not part of the text). */
    END_OF_SEQUENCE,
    /** The answer reached the most tokens asked for. */
    TOKEN_LIMIT,
    /** The context is full: no position is left for another token. */
    CONTEXT_FULL,
    /** The caller cancelled the answer (or closed the model) before it ended. */
    CANCELLED;

    /** The engine's reason in the facade's words. */
    static StopReason of(fs.generate.StopReason reason) {
        return switch (reason) {
            case END_OF_SEQUENCE -> END_OF_SEQUENCE;
            case TOKEN_LIMIT -> TOKEN_LIMIT;
            case CONTEXT_FULL -> CONTEXT_FULL;
            case CANCELLED -> CANCELLED;
        };
    }
}
