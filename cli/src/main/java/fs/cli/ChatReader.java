package fs.cli;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * Reads {@code fs chat}'s entries from its input: one line each, or a {@code """} block, which is one message
 * whatever it holds, as in Ollama: a line that starts with {@code """} opens it, a line that ends with {@code """}
 * closes it, and one line may do both ({@code """/usr/bin is…"""}). Blank lines are skipped.
 *
 * <p>Ctrl-C at the prompt drops what was being typed, the line or the block, as a shell drops the line; at an empty
 * prompt it quits, as Ctrl-D and the end of the input do.
 */
final class ChatReader {
    static final String PROMPT = "> ";
    static final String BLOCK_PROMPT = "... ";
    private static final String FENCE = "\"\"\"";

    private final ChatInput input;
    private final PrintWriter err;

    ChatReader(ChatInput input, PrintWriter err) {
        this.input = input;
        this.err = err;
    }

    /** The next entry; {@link ChatEntry.Command#EXIT} when the user quits or the input ends. */
    ChatEntry next() throws IOException {
        StringBuilder block = null; // the text of an open block so far
        while (true) {
            String line;
            try {
                line = input.readLine(block == null ? PROMPT : BLOCK_PROMPT);
            } catch (ChatInput.Interrupted e) {
                if (block == null && e.partialLine().isEmpty()) return ChatEntry.Command.EXIT;
                block = null;
                continue;
            }
            if (line == null) {
                if (block != null) err.println("fs: the input ended inside a \"\"\" block, which was not sent");
                return ChatEntry.Command.EXIT;
            }
            if (block != null) {
                String end = line.stripTrailing();
                if (!end.endsWith(FENCE)) {
                    block.append('\n').append(line);
                    continue;
                }
                block.append('\n').append(end, 0, end.length() - FENCE.length());
                String text = blockText(block);
                block = null;
                if (!text.isBlank()) return new ChatEntry.Message(text);
                continue;
            }
            String start = line.stripLeading();
            if (start.startsWith(FENCE)) {
                String rest = start.substring(FENCE.length());
                String end = rest.stripTrailing();
                if (end.endsWith(FENCE)) { // a block of one line; a pasted block arrives so too, newlines and all
                    String text = blockText(end.substring(0, end.length() - FENCE.length()));
                    if (!text.isBlank()) return new ChatEntry.Message(text);
                } else {
                    block = new StringBuilder(rest);
                }
                continue;
            }
            if (!line.isBlank()) return ChatEntry.ofLine(line);
        }
    }

    /** A block's text without the line breaks right after its opening and before its closing {@code """}. */
    private static String blockText(CharSequence between) {
        String text = between.toString();
        if (text.startsWith("\n")) text = text.substring(1);
        if (text.endsWith("\n")) text = text.substring(0, text.length() - 1);
        return text;
    }
}
