package fs.api;

import java.util.List;

/**
 * One answer of a {@link Chat}.
 *
 * @param text            the answer, without the model's reasoning and its tool calls
 * @param reasoning       the model's reasoning (Qwen3's {@code <think>} block, tags and layout removed); empty when it
 *                        did not think
 * @param stopReason      why the answer ended: the model ended it, the token limit or the context was reached, or it
 *                        was cancelled
 * @param promptTokens    tokens of the prompt (the whole history through the chat template)
 * @param cachedTokens    of those, how many were reused from the KV cache rather than run again
 * @param generatedTokens tokens generated (the end-of-sequence token not counted)
 * @param toolCalls       the calls the model made, in order (empty when it made none, or the chat has no tools; a
 *                        call the token limit cut short is left out): send each one's result back with
 *                        {@link Message#toolResult}
 */
public record Reply(String text, String reasoning, StopReason stopReason, int promptTokens, int cachedTokens,
                    int generatedTokens, List<ToolCall> toolCalls) {
    /** Copies the calls. */
    public Reply {
        toolCalls = List.copyOf(toolCalls);
    }
}
