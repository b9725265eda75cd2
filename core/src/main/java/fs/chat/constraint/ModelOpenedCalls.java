package fs.chat.constraint;

import fs.generate.TokenConstraint;
import fs.grammar.Grammar;
import fs.grammar.GrammarConstraint;
import fs.grammar.TokenVocabulary;
import fs.tokenizer.Tokenizer;
import java.util.OptionalInt;

/**
 * The constraint of tool_choice auto, the same for fs serve and fs.api: the answer is free until the model writes
 * the {@code <tool_call>} token itself, then what follows is held to {@code calls} (the grammar of the rest of a
 * call); with thinking, a think block the answer opens with stays free, so a tag mentioned in the thoughts starts
 * nothing ({@link AfterThinking}).
 */
public final class ModelOpenedCalls {
    private ModelOpenedCalls() {}

    /** The constraint; null when the vocabulary has no {@code <tool_call>} token (calls are then found in free text). */
    public static TokenConstraint of(Grammar calls, Tokenizer tokenizer, int[] stopIds, boolean thinking) {
        OptionalInt tag = tokenizer.tokenId("<tool_call>");
        if (tag.isEmpty()) return null;
        TokenConstraint triggered =
                GrammarConstraint.triggered(calls, TokenVocabulary.of(tokenizer), stopIds, tag.getAsInt());
        OptionalInt open = tokenizer.tokenId("<think>");
        OptionalInt close = tokenizer.tokenId("</think>");
        return thinking && open.isPresent() && close.isPresent()
                ? new AfterThinking(triggered, open.getAsInt(), close.getAsInt()) : triggered;
    }
}
