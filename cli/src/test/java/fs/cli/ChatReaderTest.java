package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class ChatReaderTest {
    /** A line that stands for Ctrl-C pressed after typing what follows the marker. */
    private static final String CTRL_C = "\u0003";

    /** Lines as a user would type them, with the prompts they were asked at. */
    private static final class ScriptedInput implements ChatInput {
        private final Deque<String> lines;
        final List<String> prompts = new ArrayList<>();

        ScriptedInput(String... lines) {
            this.lines = new ArrayDeque<>(List.of(lines));
        }

        @Override
        public String readLine(String prompt) throws Interrupted {
            prompts.add(prompt);
            String line = lines.poll();
            if (line != null && line.startsWith(CTRL_C)) throw new Interrupted(line.substring(1));
            return line;
        }

        @Override
        public boolean hasTypedAhead() {
            return !lines.isEmpty();
        }

        @Override
        public BooleanSupplier stopOnCtrlC() {
            return () -> false;
        }

        @Override
        public void close() {}
    }

    private final StringWriter err = new StringWriter();

    private List<ChatEntry> entries(ChatInput input) throws IOException {
        ChatReader reader = new ChatReader(input, new PrintWriter(err, true));
        List<ChatEntry> entries = new ArrayList<>();
        for (ChatEntry entry = reader.next(); entry != ChatEntry.Command.EXIT; entry = reader.next()) {
            entries.add(entry);
        }
        return entries;
    }

    private static ChatEntry.Message message(String text) {
        return new ChatEntry.Message(text);
    }

    @Test
    void eachLineIsAnEntryAndBlankLinesAreSkipped() throws IOException {
        assertEquals(List.of(message("Hello"), ChatEntry.Command.RESET, message("again")),
                entries(new ScriptedInput("Hello", "", "   ", "/reset", "again")));
    }

    @Test
    void aBlockBetweenTripleQuoteLinesIsOneMessageOfItsLines() throws IOException {
        ScriptedInput input = new ScriptedInput("\"\"\"", "first line", "  indented", "", "/reset", "\"\"\"", "after");
        assertEquals(List.of(message("first line\n  indented\n\n/reset"), message("after")), entries(input));
        assertEquals(List.of("> ", "... ", "... ", "... ", "... ", "... ", "> ", "> "), input.prompts);
    }

    @Test
    void textOnTheFenceLinesBelongsToTheBlock() throws IOException {
        assertEquals(List.of(message("Write a poem\nabout the sea")),
                entries(new ScriptedInput("\"\"\"Write a poem", "about the sea\"\"\"")));
    }

    @Test
    void aBlockOnOneLineIsAMessageEvenWhenItStartsWithASlash() throws IOException {
        assertEquals(List.of(message("/usr/bin is where programs live")),
                entries(new ScriptedInput("\"\"\"/usr/bin is where programs live\"\"\"")));
    }

    @Test
    void aPastedBlockArrivesAsOneLineWithItsNewlines() throws IOException {
        assertEquals(List.of(message("one\ntwo")), entries(new ScriptedInput("\"\"\"\none\ntwo\n\"\"\"")));
    }

    @Test
    void anEmptyBlockSendsNothing() throws IOException {
        assertEquals(List.of(message("x")), entries(new ScriptedInput("\"\"\"\"\"\"", "\"\"\"", "", "\"\"\"", "x")));
    }

    @Test
    void theEndOfTheInputInsideABlockSendsNothingAndSaysSo() throws IOException {
        assertEquals(List.of(message("before")), entries(new ScriptedInput("before", "\"\"\"", "never closed")));
        assertTrue(err.toString().contains("ended inside a \"\"\" block"), err.toString());
    }

    @Test
    void ctrlCOnAPartlyTypedLineDropsItAndAtAnEmptyPromptQuits() throws IOException {
        ScriptedInput input = new ScriptedInput(CTRL_C + "half a thou", "Hello", CTRL_C, "never read");
        assertEquals(List.of(message("Hello")), entries(input));
        assertEquals(3, input.prompts.size(), "nothing is read after Ctrl-C at an empty prompt");
    }

    @Test
    void ctrlCInsideABlockDropsTheBlockEvenOnAnEmptyLine() throws IOException {
        ScriptedInput input = new ScriptedInput("\"\"\"", "dropped", CTRL_C, "kept");
        assertEquals(List.of(message("kept")), entries(input));
        assertEquals(List.of("> ", "... ", "... ", "> ", "> "), input.prompts);
    }
}
