package fs.api;

import fs.FsException;
import java.util.List;
import java.util.Locale;

/**
 * A turn of a conversation: one to start a {@link Chat} from ({@link FsModel#newChat(ChatParams, java.util.List)}),
 * to send ({@link Chat#send(List, TokenConsumer, Cancellation)}), or as {@link Chat#history()} returns it.
 *
 * @param role       who said it
 * @param text       what was said (an assistant's answer without its reasoning; a tool's result)
 * @param toolCalls  the calls an assistant's answer made (empty for every other role)
 * @param toolCallId for a tool's result, the {@link ToolCall#id()} it answers (null for every other role)
 */
public record Message(Role role, String text, List<ToolCall> toolCalls, String toolCallId) {

    /** Who says a message; the system prompt is {@link ChatParams#systemPrompt()}. */
    public enum Role {
        /** The person asking. */
        USER,
        /** The model. */
        ASSISTANT,
        /** A function the model called, answering with its result. */
        TOOL
    }

    /** Checks that the parts are there and fit the role. */
    public Message {
        if (role == null) throw new FsException("a chat message has no role");
        String who = role.name().toLowerCase(Locale.ROOT);
        if (text == null) throw new FsException("a " + who + " message has no text (use \"\" for none)");
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
        if (!toolCalls.isEmpty() && role != Role.ASSISTANT) {
            throw new FsException("a " + who + " message cannot hold tool calls: only the assistant calls");
        }
        if (toolCallId != null && role != Role.TOOL) {
            throw new FsException("a " + who + " message answers no tool call: only a tool's result does");
        }
    }

    /** A message of one role and its text. */
    public Message(Role role, String text) {
        this(role, text, List.of(), null);
    }

    /** A message of the user. */
    public static Message user(String text) {
        return new Message(Role.USER, text);
    }

    /** An answer of the model. */
    public static Message assistant(String text) {
        return new Message(Role.ASSISTANT, text);
    }

    /** An answer of the model that called tools ({@code text} possibly empty). */
    public static Message assistant(String text, List<ToolCall> toolCalls) {
        return new Message(Role.ASSISTANT, text, toolCalls, null);
    }

    /** The result of the call {@code callId}, as the function returned it (often JSON). */
    public static Message toolResult(String callId, String result) {
        return new Message(Role.TOOL, result, List.of(), callId);
    }
}
