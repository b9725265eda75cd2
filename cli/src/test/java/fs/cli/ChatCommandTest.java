package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.Golden;
import fs.tokenizer.Tokenizer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ChatCommandTest {

    private static CliRun chat(String stdin, String... args) {
        InputStream original = System.in;
        System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        try {
            return CliRun.of(args);
        } finally {
            System.setIn(original);
        }
    }

    @Test
    void answersEachLineReusesTheCacheResetsAndEndsAtEof() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        String model = golden.modelDir().toString();
        // "Hello" as the first message renders to the reference's greedy prompt.
        String answer = Tokenizer.load(golden.modelDir()).decode(golden.greedyGeneratedIds(), false);
        CliRun run = chat("Hello\nHow are you?\n/reset\nHello\n", "chat", model, "-n", "16", "--temp", "0", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        String[] answers = run.out().split(System.lineSeparator(), -1);
        assertEquals(4, answers.length, run.out()); // three answers, each ending a line, then nothing
        assertEquals(answer, answers[0]);
        assertEquals(answer, answers[2], "after /reset the first answer comes again");
        assertEquals("", answers[3]);
        assertTrue(run.err().contains("reused from the cache"), run.err());
    }

    /** As llama-cli's perf summary: once, at exit, over every answer, not between an answer and the next prompt. */
    @Test
    void theStatisticsArePrintedOnceAtExitForTheWholeChat() {
        CliRun run = chat("Hello\nHow are you?\n", "chat", Golden.modelDir("tiny-tied").toString(), "-n", "3",
                "--temp", "0", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(1, occurrences(run.err(), "generation: "), run.err());
        String[] lines = run.err().strip().split(System.lineSeparator());
        assertEquals("fs: 2 answers in all:", lines[lines.length - 3], run.err());
        assertTrue(lines[lines.length - 2].startsWith("prompt:     "), run.err());
        // greedy answers of -n 3 each, so six tokens in all, and the second prompt reused the first turn's cache
        assertTrue(lines[lines.length - 1].startsWith("generation: 6 tokens (4 forwards) in "), run.err());
        assertTrue(lines[lines.length - 2].contains("reused from the cache"), run.err());
    }

    @Test
    void exitCommandEndsTheChat() {
        CliRun run = chat("/exit\nHello\n", "chat", Golden.modelDir("tiny-tied").toString(), "-n", "4", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals("", run.out());
    }

    @Test
    void helpListsTheCommandsAndNothingGoesToTheModel() {
        CliRun run = chat("/help\n/?\n", "chat", Golden.modelDir("tiny-tied").toString(), "-n", "4", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals("", run.out());
        for (String command : new String[] {"/help, /?", "/reset, /clear", "/exit, /bye", "\"\"\"", "Ctrl-C"}) {
            assertEquals(2, occurrences(run.err(), "  " + command), command + " in\n" + run.err());
        }
        assertFalse(run.err().contains("tokens in"), "no generation: " + run.err());
    }

    @Test
    void anUnknownCommandGetsAHintInsteadOfAnAnswer() {
        CliRun run = chat("/usr/bin is where programs live\n", "chat", Golden.modelDir("tiny-tied").toString(),
                "-n", "4", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals("", run.out());
        assertTrue(run.err().contains("fs: /usr/bin is not a command (/help lists them)"), run.err());
    }

    @Test
    void aTripleQuoteBlockIsOneMessageOfItsLines() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        String model = golden.modelDir().toString();
        String hello = Tokenizer.load(golden.modelDir()).decode(golden.greedyGeneratedIds(), false);
        String[] options = {"-n", "16", "--temp", "0", "-t", "2"};
        String twoLines = CliRun.of(concat(new String[] {"run", model, "-p", "Line one\nLine two"}, options)).out();

        CliRun run = chat("\"\"\"\nHello\n\"\"\"\n/reset\n\"\"\"Line one\nLine two\"\"\"\n",
                concat(new String[] {"chat", model}, options));
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(hello + System.lineSeparator() + twoLines, run.out());
    }

    private static int occurrences(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) count++;
        return count;
    }

    private static String[] concat(String[] first, String[] second) {
        String[] both = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }
}
