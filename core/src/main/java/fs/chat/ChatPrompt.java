package fs.chat;

import com.fasterxml.jackson.databind.JsonNode;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * The prompt that asks a model for a chat's next assistant turn: the system prompt, the conversation so far and the
 * tools offered, rendered through the chat template with the assistant's header and encoded. The CLI's conversation,
 * the API's chat and the server all build their prompts here, so one conversation gives the model the same ids
 * whichever of them it goes through (and the KV cache a slot holds matches across turns).
 */
public final class ChatPrompt {
    private final ChatTemplate template;
    private final Tokenizer tokenizer;

    public ChatPrompt(ChatTemplate template, Tokenizer tokenizer) {
        this.template = template;
        this.tokenizer = tokenizer;
    }

    /**
     * The ids of the prompt for the assistant turn that follows {@code messages}.
     *
     * @param systemPrompt the system message put before {@code messages}; null for none (a stateless caller's
     *     messages may start with their own)
     * @param tools function definitions offered to the model, as JSON objects (empty for none)
     * @param enableThinking null: the template's default; only {@code false} changes the prompt
     */
    public int[] nextTurn(String systemPrompt, List<ChatMessage> messages, List<JsonNode> tools,
            Boolean enableThinking) {
        List<ChatMessage> rendered = messages;
        if (systemPrompt != null) {
            rendered = new ArrayList<>(messages.size() + 1);
            rendered.add(ChatMessage.system(systemPrompt));
            rendered.addAll(messages);
        }
        return tokenizer.encode(template.render(rendered, tools, true, enableThinking));
    }
}
