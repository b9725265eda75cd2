package fs.chat.constraint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.generate.TokenConstraint;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AfterThinkingTest {
    private static final int OPEN = 7, CLOSE = 8;

    /** Allows only token 1, and records what it was given. */
    private static final class OnlyOne implements TokenConstraint {
        final List<Integer> accepted = new ArrayList<>();

        @Override
        public boolean allows(int token) {
            return token == 1;
        }

        @Override
        public void mask(float[] logits) {
            for (int i = 0; i < logits.length; i++) if (i != 1) logits[i] = Float.NEGATIVE_INFINITY;
        }

        @Override
        public void accept(int token) {
            accepted.add(token);
        }
    }

    @Test
    void aThinkBlockIsFreeAndTheInnerConstraintFollowsIt() {
        OnlyOne inner = new OnlyOne();
        AfterThinking constraint = new AfterThinking(inner, OPEN, CLOSE);
        assertTrue(constraint.allows(OPEN) && constraint.allows(1));
        assertFalse(constraint.allows(3), "before the block, only what opens it or what inner allows");
        float[] logits = {0, 1, 2, 3, 4, 5, 6, 7, 8};
        constraint.mask(logits);
        assertEquals(7f, logits[OPEN]);
        assertEquals(Float.NEGATIVE_INFINITY, logits[3]);
        constraint.accept(OPEN);
        assertTrue(constraint.allows(3), "inside the block every token is free");
        float[] free = {0, 1, 2};
        constraint.mask(free);
        assertArrayEquals(new float[] {0, 1, 2}, free);
        constraint.accept(3);
        constraint.accept(CLOSE);
        assertFalse(constraint.allows(3));
        constraint.accept(1);
        assertEquals(List.of(1), inner.accepted, "inner sees only what follows the block");
    }

    @Test
    void withoutAThinkBlockTheInnerConstraintHoldsFromTheStart() {
        OnlyOne inner = new OnlyOne();
        AfterThinking constraint = new AfterThinking(inner, OPEN, CLOSE);
        constraint.accept(1);
        assertFalse(constraint.allows(OPEN), "a think block opens the answer or not at all");
        assertEquals(List.of(1), inner.accepted);
    }
}
