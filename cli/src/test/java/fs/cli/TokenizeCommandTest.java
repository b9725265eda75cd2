package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import fs.tokenizer.Qwen3Files;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** fs tokenize and fs detokenize through the command line, checked against the Hugging Face goldens. */
class TokenizeCommandTest {
    private final String model = Qwen3Files.dir().toString();
    private final List<JsonNode> goldens = Qwen3Files.jsonLines("qwen3_tokenizer_golden.jsonl");

    private record Result(int exit, String out, String err) {}

    private static Result run(byte[] stdin, String... args) {
        InputStream saved = System.in;
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        try {
            System.setIn(new ByteArrayInputStream(stdin));
            int exit = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
            return new Result(exit, out.toString(), err.toString());
        } finally {
            System.setIn(saved);
        }
    }

    private static Result run(String... args) {
        return run(new byte[0], args);
    }

    /** The longest golden of a category: the most to check per run. */
    private JsonNode golden(String category) {
        return goldens.stream().filter(g -> g.get("category").asText().equals(category))
                .max(java.util.Comparator.comparingInt(g -> g.get("ids").size())).orElseThrow();
    }

    private static String ids(JsonNode golden) {
        return Arrays.stream(Qwen3Files.ints(golden.get("ids"))).mapToObj(Integer::toString).collect(Collectors.joining(" "));
    }

    private static void assertOneLineError(Result result, String expectedPart) {
        assertEquals(1, result.exit(), result.err());
        assertEquals("", result.out());
        assertEquals(1, result.err().lines().count(), result.err());
        assertTrue(result.err().startsWith("fs: ") && result.err().contains(expectedPart), result.err());
    }

    @Test
    void tokenizesTheTextArgument() {
        // Each run loads the tokenizer, so a few goldens: plain English, other scripts, added tokens.
        for (JsonNode golden : List.of(golden("basic"), golden("multilingual"), golden("special"))) {
            Result result = run("tokenize", model, golden.get("text").asText());
            assertEquals(0, result.exit(), result.err());
            assertEquals(ids(golden) + System.lineSeparator(), result.out(), golden.get("text").asText());
        }
    }

    @Test
    void tokenizesStdinToTheEnd() {
        JsonNode golden = goldens.stream().filter(g -> g.get("text").asText().contains("\n")).findFirst().orElseThrow();
        Result result = run(golden.get("text").asText().getBytes(StandardCharsets.UTF_8), "tokenize", model);
        assertEquals(0, result.exit(), result.err());
        assertEquals(ids(golden) + System.lineSeparator(), result.out());
    }

    @Test
    void refusesInvalidUtf8OnStdin() {
        byte[] invalid = {'a', 'b', (byte) 0xC3, '(', 'c'};
        assertOneLineError(run(invalid, "tokenize", model), "stdin is not valid UTF-8 (invalid byte at offset 2)");
        byte[] jsonLines = "{\"text\": \"\u00e9\"}\n{\"text\": \"x\u00ff\"}\n".getBytes(StandardCharsets.ISO_8859_1);
        Result result = run(jsonLines, "tokenize", "--jsonl", model);
        assertEquals(1, result.exit());
        assertEquals("fs: stdin line 1 is not valid UTF-8", result.err().strip());
    }

    @Test
    void tokenizesJsonLinesInOrder() {
        List<JsonNode> cases = goldens.subList(100, 177);
        String input = cases.stream().map(g -> "{\"text\": " + g.get("text").toString() + "}").collect(Collectors.joining("\n"));
        Result result = run(input.getBytes(StandardCharsets.UTF_8), "tokenize", "--jsonl", model);
        assertEquals(0, result.exit(), result.err());
        List<String> lines = result.out().lines().toList();
        assertEquals(cases.size(), lines.size());
        for (int i = 0; i < cases.size(); i++) {
            assertEquals("{\"ids\":[" + ids(cases.get(i)).replace(' ', ',') + "]}", lines.get(i), cases.get(i).get("text").asText());
        }
    }

    @Test
    void refusesAJsonLineWithALoneSurrogate() {
        // JSON's \\u escapes can spell half of a surrogate pair; no UTF-8 text can, so there is nothing to tokenize.
        byte[] input = "{\"text\": \"ok\"}\n{\"text\": \"a\\ud800b\"}\n{\"text\": \"ok\"}\n".getBytes(StandardCharsets.UTF_8);
        Result result = run(input, "tokenize", "--jsonl", model);
        assertEquals(1, result.exit());
        assertEquals("{\"ids\":[562]}", result.out().strip());
        assertEquals("fs: stdin line 2: \"text\" holds a lone surrogate \\ud800 at character 1, which is not Unicode text",
                result.err().strip());
        // A pair spelled as two escapes is one character, and tokenizes.
        assertEquals(0, run("{\"text\": \"\\ud83d\\ude42\"}\n".getBytes(StandardCharsets.UTF_8), "tokenize", "--jsonl", model).exit());
    }

    @Test
    void refusesAJsonLineWithoutText() {
        byte[] input = "{\"text\": \"ok\"}\n[1, 2]\n".getBytes(StandardCharsets.UTF_8);
        Result result = run(input, "tokenize", "--jsonl", model);
        assertEquals(1, result.exit());
        assertEquals("{\"ids\":[562]}", result.out().strip());
        assertEquals("fs: stdin line 2 is not a JSON object with a \"text\" string", result.err().strip());
        Result withText = run("tokenize", "--jsonl", model, "text");
        assertEquals(2, withText.exit());
        assertEquals("fs: --jsonl reads its texts from stdin; give no TEXT with it (see 'fs tokenize --help')",
                withText.err().strip());
    }

    /** What fs tokenize prints, fs detokenize reads: as one argument, one per id, with commas, or on stdin. */
    @Test
    void tokenizedIdsDetokenizeToTheText() {
        JsonNode golden = golden("multilingual");
        String text = golden.get("text").asText();
        Result tokenized = run("tokenize", model, text);
        assertEquals(0, tokenized.exit(), tokenized.err());
        String printed = tokenized.out().strip();
        assertEquals(ids(golden), printed);

        String expected = golden.get("decoded").asText() + System.lineSeparator();
        List<String[]> forms = List.of(new String[] {printed}, printed.split(" "),
                new String[] {printed.replace(' ', ',')}, new String[] {printed.replace(" ", ", ")},
                new String[] {"[" + printed.replace(" ", ", ") + "]"});
        for (String[] form : forms) {
            String[] args = new String[form.length + 2];
            args[0] = "detokenize";
            args[1] = model;
            System.arraycopy(form, 0, args, 2, form.length);
            Result decoded = run(args);
            assertEquals(0, decoded.exit(), decoded.err());
            assertEquals(expected, decoded.out(), String.join(" ", form));
        }
        Result piped = run(tokenized.out().getBytes(StandardCharsets.UTF_8), "detokenize", model);
        assertEquals(0, piped.exit(), piped.err());
        assertEquals(expected, piped.out());
    }

    @Test
    void refusesWhatIsNotATokenId() {
        Result letter = run("detokenize", model, "9707", "1,x");
        assertEquals(2, letter.exit());
        assertEquals("fs: invalid value for ID: 'x' is not a token id (ids are integers from 0, separated by spaces or "
                + "commas); see 'fs detokenize --help'", letter.err().strip());
        Result negative = run("detokenize", model, "-3");
        assertEquals(2, negative.exit());
        assertTrue(negative.err().startsWith("fs: invalid value for ID: '-3' is not a token id"), negative.err());
        Result empty = run("\n".getBytes(StandardCharsets.UTF_8), "detokenize", model);
        assertEquals(2, empty.exit());
        assertEquals("fs: no token ids, neither after MODEL nor on stdin (see 'fs detokenize --help')",
                empty.err().strip());
        Result piped = run("9707 hello".getBytes(StandardCharsets.UTF_8), "detokenize", model);
        assertOneLineError(piped, "stdin: 'hello' is not a token id");
    }

    @Test
    void detokenizes() {
        for (JsonNode golden : List.of(golden("emoji"), golden("special"))) {
            String[] args = ("detokenize " + model + " " + ids(golden)).split(" ");
            Result result = run(args);
            assertEquals(0, result.exit(), result.err());
            assertEquals(golden.get("decoded").asText() + System.lineSeparator(), result.out());
        }
        Result skipped = run("detokenize", "--skip-special", model, "151644", "872", "198", "151645");
        assertEquals("user\n" + System.lineSeparator(), skipped.out());
    }

    @Test
    void refusesAnUnknownId() {
        assertOneLineError(run("detokenize", model, "9707", "151669"), "unknown token id 151669");
    }

    @Test
    void refusesAMissingOrBrokenModel(@TempDir Path dir) throws IOException {
        assertOneLineError(run("tokenize", dir.resolve("nope").toString(), "x"), "nope: no such directory");
        assertOneLineError(run("detokenize", dir.toString(), "1"), "no tokenizer.json at");
        Files.writeString(dir.resolve("tokenizer.json"), "{\"model\": {\"vocab\": {\"a\": 0,");
        assertOneLineError(run("tokenize", dir.toString(), "x"), "tokenizer.json: the file ends too early at line 1, column 29");
    }
}
