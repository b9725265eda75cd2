package fs.generate;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.chat.ChatPrompt;
import fs.chat.ChatTemplate;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A multi-turn chat: each turn renders the whole history through the chat template and generates the answer; the
 * {@link Generator} reuses the KV cache for the part of the rendered history that did not change.
 */
public final class Conversation {
    private final Generator generator;
    private final Tokenizer tokenizer;
    private final ChatPrompt prompt;
    private final String systemPrompt; // null: none
    private final Boolean enableThinking; // null: the template's default
    private final int maxNewTokens;
    private final List<ChatMessage> history = new ArrayList<>(); // without the system prompt

    public Conversation(Generator generator, Tokenizer tokenizer, ChatTemplate template, String systemPrompt,
            Boolean enableThinking, int maxNewTokens) {
        this.generator = generator;
        this.tokenizer = tokenizer;
        this.prompt = new ChatPrompt(template, tokenizer);
        this.systemPrompt = systemPrompt;
        this.enableThinking = enableThinking;
        this.maxNewTokens = maxNewTokens;
        reset();
    }

    /** Starts over: an empty history (the system prompt stays) and an empty cache. */
    public void reset() {
        history.clear();
        generator.reset();
    }

    /**
     * Runs what every first prompt of this conversation starts with (the system message, if any, and the user turn's
     * header) and one decode step, so that the JIT compiles the kernels while the user types: on the CPU a cold first
     * forward spends seconds compiling. The prefix stays in the cache, where the first turn reuses it. It ends early
     * when {@code stopRequested} says so (the user quit before the first message).
     */
    public void warmUp(BooleanSupplier stopRequested) {
        if (!history.isEmpty()) return; // only before the first turn
        int[] a = firstPrompt("a"), b = firstPrompt("b");
        int common = 0;
        while (common < Math.min(a.length, b.length) && a[common] == b[common]) common++;
        // Two tokens or more take the batched path, and two new tokens one decode step: both then get compiled.
        if (common < 2) return;
        generator.generate(Arrays.copyOf(a, common), 2, id -> {}, stopRequested);
    }

    private int[] firstPrompt(String userText) {
        return prompt.nextTurn(systemPrompt, List.of(ChatMessage.user(userText)), List.of(), enableThinking);
    }

    /**
     * Answers {@code userText}, streaming the answer's tokens to {@code listener}. The presence and frequency penalties
     * count this answer's tokens only: the earlier turns are part of its prompt. When the history no longer fits
     * the context, throws the user-facing error and leaves the history as it was.
     *
     * <p>An answer stopped by {@code stopRequested} stays in the history as far as it was generated, as the user saw
     * it (Ollama and llama.cpp keep it too), and the next turn reuses its cache; stopped before its first token, the
     * turn leaves the history as it was, as if the message had not been sent.
     */
    public Generator.Generation reply(
            String userText, Generator.TokenListener listener, BooleanSupplier stopRequested) {
        history.add(new ChatMessage("user", userText));
        int[] ids = prompt.nextTurn(systemPrompt, history, List.of(), enableThinking);
        try {
            generator.checkFits(ids.length, maxNewTokens);
        } catch (FsException e) {
            history.removeLast();
            throw new FsException(e.getMessage() + " (/reset starts a new conversation)", e);
        }
        Generator.Generation answer = generator.generate(ids, maxNewTokens, listener, stopRequested);
        if (answer.stopReason() == StopReason.CANCELLED && answer.ids().length == 0) {
            history.removeLast();
        } else {
            history.add(new ChatMessage("assistant", tokenizer.decode(answer.ids(), false)));
        }
        return answer;
    }
}
