package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/** A command line fs cannot read is one plain line naming what is wrong, exit 2, before any model is looked for. */
class UsageErrorsTest {
    /** Loading this would fail with its own message (exit 1): each error here must come first. */
    private static final String ABSENT = "/nonexistent/model";

    /** The command line, then the error line it gets. */
    static final List<List<String>> CASES = List.of(
            List.of("rnu", "fs: unknown command 'rnu' (did you mean 'run'?); see 'fs --help'"),
            List.of("tokenise", "fs: unknown command 'tokenise' (did you mean 'tokenize'?); see 'fs --help'"),
            List.of("server", "fs: unknown command 'server' (did you mean 'serve'?); see 'fs --help'"),
            List.of("frobnicate", "fs: unknown command 'frobnicate' (see 'fs --help')"),
            List.of("help rnu", "fs: unknown command 'rnu' (did you mean 'run'?); see 'fs --help'"),
            List.of("-m " + ABSENT + " -p hi", "fs: unknown option '-m' (did you mean 'fs run -m'?); see 'fs --help'"),
            List.of("run " + ABSENT + " -p hi --temprature 1",
                    "fs: unknown option '--temprature' (did you mean '--temp'?); see 'fs run --help'"),
            List.of("run " + ABSENT + " -p hi --top_k=3",
                    "fs: unknown option '--top_k' (did you mean '--top-k'?); see 'fs run --help'"),
            List.of("run " + ABSENT + " -p hi -threads 2",
                    "fs: unknown option '-threads' (did you mean '--threads'?); see 'fs run --help'"),
            List.of("run " + ABSENT + " -p hi -x", "fs: unknown option '-x' (see 'fs run --help')"),
            // Not clusters of one-letter options: once -nkvo was -n kvo, -tb 4 was -t b 4.
            List.of("run " + ABSENT + " -p hi -nkvo", "fs: unknown option '-nkvo' (see 'fs run --help')"),
            List.of("run " + ABSENT + " -p hi -tb 4", "fs: unknown option '-tb' (see 'fs run --help')"),
            List.of("run " + ABSENT + " -p hi --frobnicate", "fs: unknown option '--frobnicate' (see 'fs run --help')"),
            List.of("run " + ABSENT + " hi there", "fs: unexpected argument 'there' (see 'fs run --help')"),
            List.of("run " + ABSENT + " -p", "fs: -p/--prompt needs a value (TEXT); see 'fs run --help'"),
            List.of("run " + ABSENT + " -p hi --temp warm",
                    "fs: invalid value for --temp: 'warm' is not a number (see 'fs run --help')"),
            List.of("run " + ABSENT + " -p hi -n many",
                    "fs: invalid value for -n/--n-predict: 'many' is not an integer (see 'fs run --help')"),
            List.of("run " + ABSENT + " -p hi -p ho", "fs: -p/--prompt is given twice (see 'fs run --help')"),
            List.of("run " + ABSENT, "fs: no prompt: give it after the model (fs run MODEL PROMPT), or as -p TEXT, -f "
                    + "FILE or --tokens IDS (see 'fs run --help')"),
            List.of("run " + ABSENT + " -p hi -f prompt.txt --tokens 1",
                    "fs: -p, -f and --tokens are exclusive: give the prompt one way (see 'fs run --help')"),
            List.of("run " + ABSENT + " --tokens 1 --system brief", "fs: --system goes through the chat template: it "
                    + "cannot be used with --raw or --tokens (see 'fs run --help')"),
            List.of("tokenize", "fs: MODEL is required (see 'fs tokenize --help')"),
            List.of("quantize " + ABSENT, "fs: -o/--output is required (see 'fs quantize --help')"));

    @ParameterizedTest
    @FieldSource("CASES")
    void isOnePlainLine(List<String> example) {
        String[] args = example.get(0).isEmpty() ? new String[0] : example.get(0).split(" ");
        CliRun run = CliRun.of(args);
        assertEquals(2, run.exitCode(), run.err());
        assertEquals("", run.out());
        assertEquals(example.get(1) + System.lineSeparator(), run.err());
    }

    /**
     * Every option that takes one of a fixed set of values (an enum, or one that lists its values for completion), of
     * every command: a value not in the set is a usage error, exit 2 with the pointer to the command's help, before
     * the model is looked for.
     */
    @Test
    void aValueOutsideAnEnumeratedOptionsSetIsAUsageError() {
        List<String> tried = new ArrayList<>();
        for (CommandLine command : Main.commandLine().getSubcommands().values()) {
            CommandSpec spec = command.getCommandSpec();
            if (command.getCommand() instanceof CommandLine.HelpCommand) continue;
            for (OptionSpec option : spec.options()) {
                if (option.hidden() || !enumerated(option)) continue;
                List<String> args = new ArrayList<>(List.of(spec.name()));
                spec.positionalParameters().stream().filter(p -> p.required()).forEach(p -> args.add(ABSENT));
                spec.options().stream().filter(o -> o.required() && o.group() == null && o != option)
                        .forEach(o -> args.addAll(List.of(o.longestName(), "1")));
                args.addAll(List.of(option.longestName(), "cuda"));
                CliRun run = CliRun.of(args.toArray(String[]::new));
                String line = String.join(" ", args);
                assertEquals(2, run.exitCode(), line + ": " + run.err());
                assertEquals("", run.out(), line);
                assertEquals(1, run.err().lines().count(), line + ": " + run.err());
                assertTrue(run.err().strip().matches("fs: .*'cuda'.*see 'fs " + spec.name() + " --help'\\)?"),
                        line + ": " + run.err());
                tried.add(spec.name() + " " + option.longestName());
            }
        }
        assertTrue(tried.containsAll(List.of("run --backend", "chat --backend", "bench --cache-type-k",
                "serve --log-format", "quantize --type")), "enumerated options found: " + tried);
    }

    private static boolean enumerated(OptionSpec option) {
        Iterable<String> candidates = option.completionCandidates();
        return option.auxiliaryTypes()[0].isEnum() || candidates != null && candidates.iterator().hasNext();
    }
}
