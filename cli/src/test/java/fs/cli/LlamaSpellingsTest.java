package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.Golden;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/** llama-cli's spellings work as aliases; help, version and defaults are where a user looks for them. */
class LlamaSpellingsTest {
    private static final String MODEL = Golden.modelDir("tiny-untied").toString();

    private static CliRun withStdin(String stdin, String... args) {
        InputStream original = System.in;
        System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        try {
            return CliRun.of(args);
        } finally {
            System.setIn(original);
        }
    }

    private static String ids(CliRun run) {
        assertEquals(0, run.exitCode(), run.err());
        return run.out();
    }

    @Test
    void llamaCppOptionNamesMeanWhatFsNamesMean() {
        String fs = ids(CliRun.of("run", MODEL, "-p", "Hello", "--system", "Be brief.", "--ctx", "64", "--seed", "7",
                "--temp", "0.8", "-n", "6", "--print-ids", "-t", "2"));
        String llama = ids(CliRun.of("run", "-m", MODEL, "-p", "Hello", "-sys", "Be brief.", "-c", "64", "-s", "7",
                "--temp", "0.8", "--n-predict", "6", "--print-ids", "-t", "2"));
        String longNames = ids(CliRun.of("run", "--model", MODEL, "-p", "Hello", "--system-prompt", "Be brief.",
                "--ctx-size", "64", "-s", "7", "--temp", "0.8", "-n", "6", "--print-ids", "-t", "2"));
        assertEquals(fs, llama);
        assertEquals(fs, longNames);
    }

    @Test
    void thePromptComesFromAFileOrFromStdin(@TempDir Path dir) throws IOException {
        String fromFlag = ids(CliRun.of("run", MODEL, "-p", "Hello\nthere", "-n", "6", "--temp", "0", "--print-ids", "-t", "2"));
        Path file = dir.resolve("prompt.txt");
        Files.writeString(file, "Hello\nthere\n"); // the final newline ends the file, not the message
        assertEquals(fromFlag, ids(CliRun.of("run", MODEL, "-f", file.toString(), "-n", "6", "--temp", "0", "--print-ids", "-t", "2")));
        assertEquals(fromFlag, ids(withStdin("Hello\nthere\n", "run", MODEL, "-p", "-", "-n", "6", "--temp", "0", "--print-ids", "-t", "2")));

        CliRun missing = CliRun.of("run", MODEL, "-f", dir.resolve("absent.txt").toString());
        assertEquals(1, missing.exitCode());
        assertEquals("fs: -f " + dir.resolve("absent.txt") + ": no such file", missing.err().strip());
        CliRun both = CliRun.of("run", MODEL, "-p", "Hello", "-f", file.toString());
        assertEquals(2, both.exitCode());
        assertEquals("fs: -p and -f are exclusive: give the prompt one way (see 'fs run --help')", both.err().strip());
    }

    @Test
    void hfNamesTheModelAsMOrTheArgumentDoes() {
        List<String> common = List.of("-p", "Hello", "-n", "6", "--temp", "0", "--print-ids", "-t", "2");
        String byArgument = ids(CliRun.of(concat(List.of("run", MODEL), common)));
        assertEquals(byArgument, ids(CliRun.of(concat(List.of("run", "-hf", MODEL), common))));
        assertEquals(byArgument, ids(CliRun.of(concat(List.of("run", "--hf-repo", MODEL), common))));
        CliRun twice = CliRun.of("run", "-hf", "Qwen/Qwen3-0.6B-GGUF:Q8_0", "-m", MODEL, "-p", "Hello");
        assertEquals(2, twice.exitCode());
        assertEquals("fs: the model is named twice (-m '" + MODEL + "' and -hf 'Qwen/Qwen3-0.6B-GGUF:Q8_0'): give "
                + "MODEL, -m or -hf, once (see 'fs run --help')", twice.err().strip());
    }

    /** llama-cli's flags for what fs run does anyway (one turn, the Jinja template, no warm-up) change nothing. */
    @Test
    void llamaCliFlagsForWhatFsRunDoesAreTaken() {
        List<String> common = List.of("run", MODEL, "-p", "Hello", "-n", "6", "--temp", "0", "--print-ids", "-t", "2");
        String plain = ids(CliRun.of(common.toArray(String[]::new)));
        assertEquals(plain, ids(CliRun.of(concat(common, List.of("--jinja", "-st", "--single-turn", "--no-warmup")))));
        // llama-cli's completion mode continues the prompt as it is: --raw.
        String raw = ids(CliRun.of(concat(common, List.of("--raw"))));
        assertEquals(raw, ids(CliRun.of(concat(common, List.of("-no-cnv")))));
        assertEquals(raw, ids(CliRun.of(concat(common, List.of("--no-conversation")))));
        assertTrue(!raw.equals(plain), "the template changes the prompt: " + raw);
    }

    /** In fs chat, llama-cli's flags for a conversation, the Jinja template and no warm-up ask for what it does. */
    @Test
    void llamaCliConversationFlagsAreTakenByChat() {
        List<String> common = List.of("chat", MODEL, "-n", "6", "--temp", "0", "-t", "2");
        CliRun plain = withStdin("Hello\n", common.toArray(String[]::new));
        assertEquals(0, plain.exitCode(), plain.err());
        assertFalse(plain.out().isBlank(), "an answer: " + plain.err());
        CliRun flagged = withStdin("Hello\n", concat(common, List.of("-cnv", "--conversation", "-i", "--interactive",
                "-if", "--interactive-first", "--jinja", "--no-warmup")));
        assertEquals(0, flagged.exitCode(), flagged.err());
        assertEquals(plain.out(), flagged.out());
    }

    /** Each of llama.cpp's flags that fs has no use for, with what it follows and the start of its explanation. */
    static final List<List<String>> EXPLAINED = List.of(
            List.of("run", "-fa", "-fa/--flash-attn is llama.cpp's: fs's attention has no variants"),
            List.of("run", "--flash-attn on", "-fa/--flash-attn is llama.cpp's: fs's attention has no variants"),
            List.of("bench", "-fa 1", "-fa/--flash-attn is llama.cpp's: fs's attention has no variants"),
            List.of("run", "-b 2048", "-b/-ub is llama.cpp's: fs processes a prompt 512 tokens per forward"),
            List.of("run", "--batch-size 2048", "-b/-ub is llama.cpp's: fs processes a prompt 512 tokens per forward"),
            List.of("chat", "-ub 512", "-b/-ub is llama.cpp's: fs processes a prompt 512 tokens per forward"),
            List.of("run", "--mlock", "--mlock is llama.cpp's: fs maps the weights read-only"),
            List.of("serve", "--no-mmap", "--no-mmap is llama.cpp's: fs always maps the weights file"),
            List.of("run", "-cnv", "-cnv/-i is llama-cli's: a conversation is 'fs chat MODEL'"),
            List.of("run", "--conversation", "-cnv/-i is llama-cli's: a conversation is 'fs chat MODEL'"),
            List.of("run", "-i", "-cnv/-i is llama-cli's: a conversation is 'fs chat MODEL'"),
            List.of("run", "--interactive", "-cnv/-i is llama-cli's: a conversation is 'fs chat MODEL'"),
            List.of("run", "-if", "-cnv/-i is llama-cli's: a conversation is 'fs chat MODEL'"),
            List.of("run", "-r User:", "-r/--reverse-prompt is llama-cli's: fs run stops at the model's end of turn"),
            List.of("run", "--reverse-prompt User:", "-r/--reverse-prompt is llama-cli's: fs run stops at the model's"),
            List.of("run", "-e", "-e/--escape is llama-cli's: fs takes the prompt as it is"),
            List.of("run", "--escape", "-e/--escape is llama-cli's: fs takes the prompt as it is"),
            List.of("run", "--color", "--color is llama-cli's: fs prints the answer as plain text"),
            List.of("run", "-co", "--color is llama-cli's: fs prints the answer as plain text"),
            List.of("run", "--reasoning-budget 0", "--reasoning-budget is llama-cli's: --no-think asks the model"),
            // In fs chat, the flags of one prompt point to fs run, and the others say what chat does instead.
            List.of("chat", "-no-cnv", "-no-cnv is llama-cli's: fs chat is a conversation; for one prompt use 'fs run"),
            List.of("chat", "--no-conversation", "-no-cnv is llama-cli's: fs chat is a conversation; for one prompt"),
            List.of("chat", "-st", "-st/--single-turn is llama-cli's: one prompt and its answer is 'fs run MODEL"),
            List.of("chat", "--single-turn", "-st/--single-turn is llama-cli's: one prompt and its answer is 'fs run"),
            List.of("chat", "-r User:", "-r/--reverse-prompt is llama-cli's: fs chat ends each answer at the model's "
                    + "end of turn"),
            List.of("chat", "-e", "-e/--escape is llama-cli's: fs chat takes a message as it is typed"),
            List.of("chat", "--color", "--color is llama-cli's: fs prints the answer as plain text"),
            List.of("chat", "--reasoning-budget 0", "--reasoning-budget is llama-cli's: --no-think asks the model"));

    @ParameterizedTest
    @FieldSource("EXPLAINED")
    void llamaCppFlagsFsHasNoUseForAreExplainedInOneLine(List<String> flag) {
        // The model does not exist: the explanation comes first, while the command line is read.
        List<String> args = new ArrayList<>(List.of(flag.get(0), "/nonexistent/model"));
        if (flag.get(0).equals("run")) args.addAll(List.of("-p", "Hello"));
        args.addAll(List.of(flag.get(1).split(" ")));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertEquals(2, run.exitCode(), run.err());
        assertEquals("", run.out());
        assertEquals(1, run.err().strip().lines().count(), run.err());
        assertTrue(run.err().startsWith("fs: " + flag.get(2)), run.err());
        assertTrue(run.err().strip().matches(".*see 'fs " + flag.get(0) + " --help'\\)?"), run.err());
    }

    /**
     * Every option of every command is read under each of its names, one to three letters after a dash among them:
     * none is taken for a cluster of one-letter options (as -hf once was, for -h -f).
     */
    @Test
    void everyOptionIsReadUnderEachOfItsNames() {
        List<String> misread = new ArrayList<>();
        CommandLine fs = Main.commandLine();
        for (CommandLine command : fs.getSubcommands().values()) {
            CommandSpec spec = command.getCommandSpec();
            if (command.getCommand() instanceof CommandLine.HelpCommand) continue;
            for (OptionSpec option : spec.options()) {
                if (option.hidden()) continue; // llama.cpp's that fs explains: refused on purpose, tested above
                for (String name : option.names()) {
                    List<OptionSpec> required = requiredOptions(spec, option);
                    List<String> args = new ArrayList<>(List.of(spec.name(), name));
                    if (option.arity().max() > 0) args.add(aValue(option));
                    for (OptionSpec other : required) args.addAll(List.of(other.longestName(), "1"));
                    spec.positionalParameters().stream().filter(p -> p.required()).forEach(p -> args.add("1"));
                    CommandLine.ParseResult sub = fs.parseArgs(args.toArray(String[]::new)).subcommand();
                    if (sub.matchedOptions().size() != 1 + required.size() || sub.matchedOption(name) != option) {
                        misread.add(String.join(" ", args));
                    }
                }
            }
        }
        assertEquals(List.of(), misread);
    }

    /** A value the option takes: the first it lists (--log-format's text), else 1. */
    private static String aValue(OptionSpec option) {
        Iterable<String> candidates = option.completionCandidates();
        return candidates != null && candidates.iterator().hasNext() ? candidates.iterator().next() : "1";
    }

    /** The options {@code spec} needs besides {@code tested} to parse. */
    private static List<OptionSpec> requiredOptions(CommandSpec spec, OptionSpec tested) {
        // One of a group (verify's --tokens or -p) is required only if no other of the group is given.
        return spec.options().stream().filter(o -> o.required() && o.group() == null && o != tested).toList();
    }

    private static String[] concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return all.toArray(String[]::new);
    }

    @Test
    void theModelIsNamedOnce() {
        CliRun run = CliRun.of("run", MODEL, "-m", "other/model", "-p", "Hello");
        assertEquals(2, run.exitCode());
        assertTrue(run.err().startsWith("fs: the model is named twice"), run.err());
    }

    @Test
    void helpCommandShowsTheCommandsHelp() {
        for (String command : List.of("run", "chat", "inspect", "bench")) {
            CliRun help = CliRun.of("help", command);
            assertEquals(0, help.exitCode(), help.err());
            assertEquals(CliRun.of(command, "--help").out(), help.out());
            assertTrue(help.out().startsWith("Usage: fs " + command), help.out());
        }
    }

    @Test
    void versionNamesTheProjectVersionAndCommit() {
        CliRun run = CliRun.of("--version");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().strip().matches("fs \\d+\\.\\d+\\.\\d+\\S* \\((commit [0-9a-f]{7,40}|unknown commit), Java .+\\)"),
                run.out());
    }

    @Test
    void everyOptionSaysItsDefault() {
        List<String> silent = new ArrayList<>();
        CommandLine fs = new CommandLine(new Main());
        for (CommandLine command : fs.getSubcommands().values()) {
            if (command.getCommand() instanceof CommandLine.HelpCommand) continue; // picocli's own
            CommandSpec spec = command.getCommandSpec();
            for (OptionSpec option : spec.options()) {
                if (option.usageHelp() || option.versionHelp() || option.hidden() || option.arity().max() == 0) continue;
                if (!String.join(" ", option.description()).contains("default")
                        && !String.join(" ", option.description()).contains("required")) {
                    silent.add(spec.name() + " " + option.longestName());
                }
            }
            spec.positionalParameters().stream()
                    .filter(p -> p.required() == false && !p.hidden() && !String.join(" ", p.description()).contains("default")
                            && !String.join(" ", p.description()).contains("stdin"))
                    .forEach(p -> silent.add(spec.name() + " " + p.paramLabel()));
        }
        assertEquals(List.of(), silent, "options whose --help does not say what they default to");
    }
}
