package fs.cli;

import java.util.List;

/** One entry at {@code fs chat}'s prompt: a message for the model, or one of the chat's own commands. */
sealed interface ChatEntry {

    /** Text for the model. */
    record Message(String text) implements ChatEntry {}

    /** A word starting with / that names no command: answered with a hint, never sent to the model. */
    record UnknownCommand(String word) implements ChatEntry {}

    /** The chat's commands, each with the names it answers to (Ollama's among them) and what it does. */
    enum Command implements ChatEntry {
        HELP("lists these commands", "/help", "/?"),
        RESET("starts the conversation over", "/reset", "/clear"),
        EXIT("quits, as do Ctrl-D and Ctrl-C at an empty prompt", "/exit", "/bye");

        private final String description;
        private final List<String> names;

        Command(String description, String... names) {
            this.description = description;
            this.names = List.of(names);
        }

        List<String> names() {
            return names;
        }

        String description() {
            return description;
        }
    }

    /**
     * What one typed line asks for. As in Ollama, a line whose first word starts with / is a command, whatever
     * follows it (which is ignored), and an unknown one is not sent: "/usr/bin is…" gets a hint; such a message goes
     * in a {@code """} block, which is always a message.
     */
    static ChatEntry ofLine(String line) {
        String stripped = line.strip();
        if (!stripped.startsWith("/")) return new Message(line);
        String word = stripped.split("\\s+", 2)[0];
        for (Command command : Command.values()) {
            if (command.names.contains(word)) return command;
        }
        return new UnknownCommand(word);
    }
}
