package fs.api;

/**
 * Receives an answer's text while it is generated, on the thread that called {@link Chat#send}, in order. The
 * model's reasoning (Qwen3's {@code <think>} block) goes to {@link #onReasoning}, apart from the answer's text. A
 * consumer that throws stops the answer: {@code send} cancels the generation and rethrows.
 */
@FunctionalInterface
public interface TokenConsumer {
    /** The next piece of the answer's text (one token's worth or so; never empty). */
    void onText(String text);

    /** The next piece of the model's reasoning, before the answer's text (never empty); ignored by default. */
    default void onReasoning(String text) {}
}
