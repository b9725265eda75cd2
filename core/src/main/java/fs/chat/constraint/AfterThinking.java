package fs.chat.constraint;

import fs.generate.TokenConstraint;

/**
 * Holds a constraint back while Qwen3 thinks: when the answer opens with {@code <think>}, every token is free until
 * {@code </think>}, and only then does {@code inner} see the tokens. So a {@code <tool_call>} the model mentions in
 * its thoughts does not start a call that the grammar would then force. An answer that does not open with a think
 * block goes to {@code inner} from its first token. One per sequence, as {@code inner}.
 */
public final class AfterThinking implements TokenConstraint {
    private enum State { START, THINKING, AFTER }

    private final TokenConstraint inner;
    private final int open;
    private final int close;
    private State state = State.START;

    /** {@code inner} after the think block that {@code open} and {@code close} (the tags' token ids) delimit. */
    public AfterThinking(TokenConstraint inner, int open, int close) {
        this.inner = inner;
        this.open = open;
        this.close = close;
    }

    @Override
    public boolean allows(int token) {
        return switch (state) {
            case START -> token == open || inner.allows(token);
            case THINKING -> true;
            case AFTER -> inner.allows(token);
        };
    }

    @Override
    public void mask(float[] logits) {
        if (state == State.THINKING) return;
        if (state == State.AFTER) {
            inner.mask(logits);
            return;
        }
        float opening = open < logits.length ? logits[open] : Float.NEGATIVE_INFINITY;
        inner.mask(logits);
        if (open < logits.length) logits[open] = opening; // the think block may open whatever inner allows
    }

    @Override
    public void accept(int token) {
        switch (state) {
            case START -> {
                if (token == open) {
                    state = State.THINKING;
                } else {
                    state = State.AFTER;
                    inner.accept(token);
                }
            }
            case THINKING -> {
                if (token == close) state = State.AFTER;
            }
            case AFTER -> inner.accept(token);
        }
    }
}
