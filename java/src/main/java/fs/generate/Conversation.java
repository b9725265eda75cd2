package fs.generate;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * A multi-turn chat: each turn renders the whole history through the chat template and generates the answer; the
 * {@link Generator} reuses the KV cache for the part of the rendered history that did not change.
 */
public final class Conversation {
    private final Generator generator;
    private final Tokenizer tokenizer;
    private final ChatTemplate template;
    private final String systemPrompt; // null: none
    private final Boolean enableThinking; // null: the template's default
    private final int maxNewTokens;
    private final List<ChatMessage> history = new ArrayList<>();

    public Conversation(Generator generator, Tokenizer tokenizer, ChatTemplate template, String systemPrompt,
            Boolean enableThinking, int maxNewTokens) {
        this.generator = generator;
        this.tokenizer = tokenizer;
        this.template = template;
        this.systemPrompt = systemPrompt;
        this.enableThinking = enableThinking;
        this.maxNewTokens = maxNewTokens;
        reset();
    }

    /** Starts over: an empty history (but the system prompt) and an empty cache. */
    public void reset() {
        history.clear();
        if (systemPrompt != null) history.add(new ChatMessage("system", systemPrompt));
        generator.reset();
    }

    /**
     * Answers {@code userText}, streaming the answer's tokens to {@code listener}. When the history no longer fits
     * the context, throws the user-facing error and leaves the history as it was.
     */
    public Generator.Generation reply(String userText, Generator.TokenListener listener) {
        history.add(new ChatMessage("user", userText));
        int[] prompt = tokenizer.encode(template.render(history, true, enableThinking));
        try {
            generator.checkFits(prompt.length, maxNewTokens);
        } catch (FsException e) {
            history.removeLast();
            throw new FsException(e.getMessage() + " (/reset starts a new conversation)", e);
        }
        Generator.Generation answer = generator.generate(prompt, maxNewTokens, listener);
        history.add(new ChatMessage("assistant", tokenizer.decode(answer.ids(), false)));
        return answer;
    }
}
