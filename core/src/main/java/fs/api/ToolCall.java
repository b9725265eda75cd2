package fs.api;

import fs.FsException;

/**
 * A call the model made ({@link Reply#toolCalls()}): run the function and send its result back with
 * {@link Message#toolResult}.
 *
 * @param id        names this call, so that its result can say which call it answers
 * @param name      the function's name
 * @param arguments the arguments, as JSON text (an object for a schema of type object)
 */
public record ToolCall(String id, String name, String arguments) {
    /** Checks that every part is there. */
    public ToolCall {
        if (id == null || name == null || arguments == null) {
            throw new FsException("a tool call needs an id, a name and arguments");
        }
    }
}
