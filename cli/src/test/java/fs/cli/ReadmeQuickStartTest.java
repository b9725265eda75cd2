package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * What a new user copies from the README does what the README says: every quick command on a committed model is
 * bounded by {@code -n} (without it the tiny model writes 4,000 tokens of gibberish for over a minute) and ends with
 * the number of tokens it asks for; the fs serve quick start's server answers its curl command, refuses the same
 * command without its JSON header, and serves the model its SDK example names at the address it uses; the
 * two-command section holds two commands; the command table lists every command, each form once; every command line
 * the README shows is one of those; the README stays under 200 lines, none wider than 120 characters. (Its "Use fs
 * from Java" is fs-core's ReadmeExampleTest's.)
 */
class ReadmeQuickStartTest {
    private static final Path REPO = Path.of(System.getProperty("fs.repo"));
    private static final Pattern GENERATED = Pattern.compile("generation: +(\\d+) tokens");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The command lines the README may show, each checked here (the main job and the tests are the two commands). */
    private static final List<String> CHECKED_COMMANDS =
            List.of("./fs run -p ", "bash .ci/run", "./fs run models/", "./fs serve models/", "curl ");

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
    void theServeQuickStartAnswersItsCurlCommandAndServesTheModelItsSdkExampleNames() throws Exception {
        List<String> section = section("## fs serve");
        List<String> serve = commandsStartingWith(section, "./fs serve models/");
        List<String> curl = commandsStartingWith(section, "curl ");
        assertEquals(1, serve.size(), "one fs serve command: " + serve);
        assertEquals(1, curl.size(), "one curl command: " + curl);
        List<String> words = shellWords(serve.getFirst().substring("./fs serve ".length()));
        int port = words.indexOf("--port");
        assertTrue(port > 0, "the quick start names its port: " + serve);
        String address = "127.0.0.1:" + words.get(port + 1);
        assertTrue(curl.getFirst().contains("http://" + address + "/"), "curl asks the server started: " + curl);
        String sdk = String.join("\n", section);
        Matcher baseUrl = Pattern.compile("base_url=\"http://([^/\"]+)/v1\"").matcher(sdk);
        Matcher model = Pattern.compile("model=\"([^\"]+)\"").matcher(sdk);
        assertTrue(baseUrl.find() && model.find(), "the SDK example names the server and the model");
        assertEquals(address, baseUrl.group(1), "the SDK example asks the server started");

        words.set(0, REPO.resolve(words.getFirst()).toString());
        words.set(port + 1, "0"); // a free port: the README's may be taken on this machine
        try (LiveServe live = new LiveServe(words.toArray(String[]::new))) {
            String command = curl.getFirst().replace(address, "127.0.0.1:" + live.port());
            JsonNode answer = JSON.readTree(shell(command));
            assertEquals("chat.completion", answer.path("object").textValue(), answer.toString());
            assertTrue(answer.path("choices").path(0).path("message").path("content").isTextual(), answer.toString());
            assertTrue(answer.path("usage").path("completion_tokens").asInt() > 0, answer.toString());

            String withoutJsonHeader = command.replace(" -H 'Content-Type: application/json'", "");
            assertTrue(withoutJsonHeader.length() < command.length(), "the curl command sends its JSON header");
            assertEquals("415", shell(withoutJsonHeader + " -s -o /dev/null -w '%{http_code}'"),
                    "a plain curl -d is refused, as the README says");

            JsonNode models = JSON.readTree(live.get("/v1/models").body());
            assertEquals(model.group(1), models.path("data").path(0).path("id").textValue(), models.toString());
        }
    }

    @Test
    void everyCommandTheReadmeShowsIsOneTheseTestsCheck() throws IOException {
        List<String> commands = commandsStartingWith(readme(), "");
        assertTrue(commands.size() >= 5, commands.toString());
        for (String command : commands) {
            assertTrue(CHECKED_COMMANDS.stream().anyMatch(command::startsWith), "a command no test checks: " + command);
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
    void theCommandTableListsEveryCommand() throws IOException {
        Set<String> listed = readme().stream().filter(line -> line.startsWith("| `fs "))
                .map(line -> line.substring("| `fs ".length()).split("[ `]")[0]).collect(Collectors.toSet());
        Set<String> commands = Main.commandLine().getSubcommands().values().stream().map(CommandLine::getCommandName)
                .filter(name -> !name.equals("help")).collect(Collectors.toSet());
        assertEquals(commands, listed);
    }

    @Test
    void theReadmeIsUnder200Lines() throws IOException {
        assertTrue(readme().size() < 200, "README.md has " + readme().size() + " lines: the rest belongs in docs/");
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

    /** The README's lines from {@code heading} to the next section. */
    private static List<String> section(String heading) throws IOException {
        List<String> lines = readme();
        int start = lines.indexOf(heading);
        assertTrue(start >= 0, "the README has " + heading);
        int end = start + 1;
        while (end < lines.size() && !lines.get(end).startsWith("## ")) end++;
        return lines.subList(start + 1, end);
    }

    /**
     * The indented command lines of {@code lines} (outside fenced code) that start with {@code prefix}, each with the
     * lines it continues onto (a trailing backslash), unindented.
     */
    private static List<String> commandsStartingWith(List<String> lines, String prefix) {
        List<String> commands = new ArrayList<>();
        boolean fenced = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("```")) fenced = !fenced;
            if (fenced || !line.startsWith("    ") || (i > 0 && lines.get(i - 1).endsWith("\\"))) continue;
            StringBuilder command = new StringBuilder(line.substring(4));
            for (int next = i + 1; next < lines.size() && lines.get(next - 1).endsWith("\\"); next++) {
                command.append('\n').append(lines.get(next).substring(4));
            }
            if (command.toString().startsWith(prefix)) commands.add(command.toString());
        }
        return commands;
    }

    /** What {@code command} writes on stdout, run by bash; it must exit 0 within 60 s. */
    private static String shell(String command) throws IOException, InterruptedException {
        Process bash = new ProcessBuilder("bash", "-c", command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        bash.getOutputStream().close();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(bash.waitFor(60, TimeUnit.SECONDS), command + " did not finish in 60 s");
        assertEquals(0, bash.exitValue(), command);
        return out;
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
