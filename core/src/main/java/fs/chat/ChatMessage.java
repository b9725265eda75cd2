package fs.chat;

import fs.FsException;
import java.util.List;

/**
 * One turn of a conversation. {@code role} is "system", "user", "assistant" or "tool"; {@code reasoningContent} is an
 * assistant's thinking when it is kept apart from {@code content} (null: the template looks for a &lt;think&gt; block in
 * the content instead); {@code toolCalls} are the calls an assistant turn makes (empty when none).
 */
public record ChatMessage(String role, String content, String reasoningContent, List<ToolCall> toolCalls) {
    public ChatMessage {
        if (role == null) throw new FsException("a chat message has no role");
        if (content == null) throw new FsException("a chat message with role " + role + " has no content (use \"\" for none)");
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
    }

    public ChatMessage(String role, String content) {
        this(role, content, null, List.of());
    }

    public static ChatMessage system(String content) {
        return new ChatMessage("system", content);
    }

    public static ChatMessage user(String content) {
        return new ChatMessage("user", content);
    }

    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", content);
    }

    public static ChatMessage tool(String content) {
        return new ChatMessage("tool", content);
    }
}
