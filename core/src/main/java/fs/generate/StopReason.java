package fs.generate;

/** Why a generation ended. */
public enum StopReason {
    /** The model produced an end-of-sequence token (not part of the output). */
    END_OF_SEQUENCE,
    /** The requested number of tokens (-n) was generated. */
    TOKEN_LIMIT,
    /** The context is full: no position is left for another token. */
    CONTEXT_FULL,
    /** A stop was requested (Ctrl-C in {@code fs chat}) before the answer ended. */
    CANCELLED
}
