package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a new user copies from the README does what the README says: every quick command on a committed model is
 * bounded by {@code -n} (without it the tiny model writes 4,000 tokens of gibberish for over a minute) and ends with
 * the number of tokens it asks for; the two-command section holds two commands; the CLI table lists each command
 * form once; no line is wider than 120 characters.
 */
class ReadmeQuickStartTest {
    private static final Path REPO = Path.of(System.getProperty("fs.repo"));
    private static final Pattern GENERATED = Pattern.compile("generation: +(\\d+) tokens");

    private static List<String> readme() throws IOException {
        return Files.readAllLines(REPO.resolve("README.md"));
    }

    /** The README's indented command lines that run fs on a model committed under models/. */
    private static List<String> quickCommands() throws IOException {
        List<String> commands = new ArrayList<>();
        for (String line : readme()) {
            if (line.startsWith("    ./fs run models/")) commands.add(line.strip());
        }
        return commands;
    }

    @Test
    void everyQuickCommandOnACommittedModelIsBoundedAndGeneratesWhatItAsks() throws IOException {
        List<String> commands = quickCommands();
        assertFalse(commands.isEmpty(), "the README shows a command on a committed model");
        for (String command : commands) {
            List<String> words = shellWords(command.substring("./fs ".length()));
            int n = words.indexOf("-n");
            assertTrue(n > 0 && n + 1 < words.size(), "a quick command without -n runs until the context is full: "
                    + command);
            words.set(1, REPO.resolve(words.get(1)).toString());
            words.addAll(List.of("--temp", "0"));
            CliRun run = CliRun.of(words.toArray(String[]::new));
            assertEquals(0, run.exitCode(), command + ": " + run.err());
            Matcher generated = GENERATED.matcher(run.err());
            assertTrue(generated.find(), "the speed lines on stderr: " + run.err());
            assertEquals(Integer.parseInt(words.get(n + 1)), Integer.parseInt(generated.group(1)), command);
        }
    }

    @Test
    void theTwoCommandsSectionHoldsTwoCommands() throws IOException {
        List<String> lines = readme();
        int start = lines.indexOf("## Two commands");
        assertTrue(start >= 0, "the README has its two commands");
        int commands = 0;
        for (int i = start + 1; i < lines.size() && !lines.get(i).startsWith("## "); i++) {
            if (lines.get(i).startsWith("    ")) commands++;
        }
        assertEquals(2, commands, "one command runs the main job, one the tests");
    }

    @Test
    void theCliTableListsEachCommandFormOnce() throws IOException {
        List<String> rows = new ArrayList<>();
        for (String line : readme()) {
            if (line.startsWith("| `fs ")) rows.add(line.substring(0, line.indexOf('`', 3)));
        }
        assertTrue(rows.size() > 10, "the CLI reference table");
        assertEquals(rows.stream().distinct().count(), rows.size(), "a command form listed twice: " + rows);
    }

    @Test
    void noLineIsWiderThan120Characters() throws IOException {
        List<String> lines = readme();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            assertTrue(line.codePointCount(0, line.length()) <= 120, "README.md:" + (i + 1) + " is "
                    + line.codePointCount(0, line.length()) + " characters");
        }
    }

    /** Words as a POSIX shell splits a line with double quotes and no expansions. */
    private static List<String> shellWords(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false, inWord = false;
        for (char c : line.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
                inWord = true;
            } else if (c == ' ' && !quoted) {
                if (inWord) words.add(word.toString());
                word.setLength(0);
                inWord = false;
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (inWord) words.add(word.toString());
        return words;
    }
}
