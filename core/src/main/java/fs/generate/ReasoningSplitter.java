package fs.generate;

import java.util.List;

/**
 * Splits a chat answer that arrives in pieces into the model's reasoning and its content, as llama-server returns
 * them ({@code reasoning_content} and {@code content}): a {@code <think>…</think>} block at the start of the answer
 * (Qwen3 thinks there unless told not to) is the reasoning, the rest the content. The whitespace around the reasoning
 * and before the content is the template's layout and is dropped. Tags split across pieces, and whitespace that may
 * end the reasoning, are held back until decided. A {@code <think>} that does not start the answer is content.
 *
 * <p>Shared by {@code fs serve} (reasoning_content) and the library's chats ({@code fs.api}); not thread-safe: one
 * answer, one thread.
 */
public final class ReasoningSplitter {
    private static final String OPEN = "<think>";
    private static final String CLOSE = "</think>";

    /** Text to add to the reasoning and to the content (each possibly empty). */
    public record Delta(String reasoning, String content) {
        /** Whether neither part got any text. */
        public boolean isEmpty() {
            return reasoning.isEmpty() && content.isEmpty();
        }
    }

    private enum State { UNDECIDED, REASONING, CONTENT }

    private final HeldBackText pending = new HeldBackText();
    private State state = State.UNDECIDED;
    private boolean reasoningStarted; // leading whitespace of the reasoning is dropped until it starts
    private boolean contentStarted; // whitespace after </think> is dropped until the content starts

    /** What the pieces pushed so far add to the reasoning and the content. */
    public Delta push(String piece) {
        pending.append(piece);
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        while (true) {
            switch (state) {
                case UNDECIDED -> {
                    int start = 0;
                    while (start < pending.length() && Character.isWhitespace(pending.charAt(start))) start++;
                    int rest = pending.length() - start;
                    if (rest >= OPEN.length() && pending.indexOf(OPEN, start) == start) {
                        pending.drop(start + OPEN.length());
                        state = State.REASONING;
                        continue;
                    }
                    if (rest < OPEN.length() && pending.endsWith(OPEN, rest)) {
                        return new Delta("", ""); // whitespace, then perhaps the start of <think>
                    }
                    state = State.CONTENT;
                    contentStarted = true; // no think block: the answer's text is all content, as it came
                }
                case REASONING -> {
                    int at = pending.indexOf(CLOSE, 0);
                    if (at >= 0) {
                        appendReasoning(reasoning, pending.take(at).stripTrailing());
                        pending.drop(CLOSE.length());
                        state = State.CONTENT;
                        continue;
                    }
                    appendReasoning(reasoning, pending.takeAllBut(heldBackInReasoning()));
                    return new Delta(reasoning.toString(), content.toString());
                }
                case CONTENT -> {
                    appendContent(content, pending.takeAll());
                    return new Delta(reasoning.toString(), content.toString());
                }
            }
        }
    }

    /** What was held back, at the end of the answer: reasoning the model did not close, or text that was not a tag. */
    public Delta flush() {
        String rest = pending.takeAll();
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        if (state == State.REASONING) appendReasoning(reasoning, rest.stripTrailing());
        else appendContent(content, rest);
        return new Delta(reasoning.toString(), content.toString());
    }

    private void appendReasoning(StringBuilder reasoning, String text) {
        if (!reasoningStarted) {
            text = text.stripLeading();
            if (text.isEmpty()) return;
            reasoningStarted = true;
        }
        reasoning.append(text);
    }

    private void appendContent(StringBuilder content, String text) {
        if (!contentStarted) {
            text = text.stripLeading();
            if (text.isEmpty()) return;
            contentStarted = true;
        }
        content.append(text);
    }

    /** Length of the tail of pending that may still turn out to be whitespace before {@code </think>}. */
    private int heldBackInReasoning() {
        int keep = pending.partialMarker(List.of(CLOSE));
        while (keep < pending.length() && Character.isWhitespace(pending.charAt(pending.length() - keep - 1))) keep++;
        return keep;
    }
}
