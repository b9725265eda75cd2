package fs.api;

import fs.FsException;

/**
 * An earlier turn of a conversation, to start a {@link Chat} from ({@link FsModel#newChat(ChatParams, java.util.List)})
 * or as {@link Chat#history()} returns it.
 *
 * @param role who said it
 * @param text what was said (an assistant's answer without its reasoning)
 */
public record Message(Role role, String text) {

    /** Who says a message; the system prompt is {@link ChatParams#systemPrompt()}. */
    public enum Role {
        /** The person asking. */
        USER,
        /** The model. */
        ASSISTANT
    }

    /** Checks that both parts are there. */
    public Message {
        if (role == null) throw new FsException("a chat message has no role");
        if (text == null) throw new FsException("a " + role.name().toLowerCase(java.util.Locale.ROOT)
                + " message has no text (use \"\" for none)");
    }

    /** A message of the user. */
    public static Message user(String text) {
        return new Message(Role.USER, text);
    }

    /** An answer of the model. */
    public static Message assistant(String text) {
        return new Message(Role.ASSISTANT, text);
    }
}
