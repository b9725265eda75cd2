package fs.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.OverwrittenOptionException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * A usage error in fs's words: what is wrong, in one plain line, with the nearest name when a command or an option is
 * mistyped. picocli's own wording ("Unmatched argument at index 0", "positional parameter at index 1..*") speaks of
 * its parser, not of what the user typed.
 */
final class UsageErrors {
    private UsageErrors() {}

    /** The line for {@code e} (without "fs: " and the pointer to --help). */
    static String describe(ParameterException e) {
        CommandSpec command = e.getCommandLine().getCommandSpec();
        return switch (e) {
            case UnmatchedArgumentException unmatched when !unmatched.getUnmatched().isEmpty() ->
                    unmatched(unmatched.getUnmatched().getFirst(), unmatched.isUnknownOption(), command);
            case MissingParameterException missing when !missing.getMissing().isEmpty() -> missing(missing);
            case OverwrittenOptionException overwritten -> name(overwritten.getOverwritten()) + " is given twice";
            // fs help rnu: picocli's help command has no exception type of its own for a command it does not know.
            case ParameterException unknown when unknown.getValue() != null
                    && unknown.getMessage().startsWith("Unknown subcommand") ->
                    unmatched(unknown.getValue(), false, command);
            default -> e.getCause() instanceof TypeConversionException conversion && e.getArgSpec() != null
                    ? "invalid value for " + name(e.getArgSpec()) + ": " + why(e.getArgSpec(), e.getValue(), conversion)
                    : e.getMessage(); // fs's own, already in its words
        };
    }

    /** How fs names an option in its messages: its short and its first long spelling, as in "-t/--threads". */
    static String name(ArgSpec arg) {
        if (!(arg instanceof OptionSpec option)) return arg.paramLabel();
        String shortName = null;
        String longName = null;
        for (String name : option.names()) {
            if (name.startsWith("--")) {
                if (longName == null) longName = name;
            } else if (shortName == null) {
                shortName = name;
            }
        }
        return shortName == null ? longName : longName == null ? shortName : shortName + "/" + longName;
    }

    private static String unmatched(String arg, boolean looksLikeAnOption, CommandSpec command) {
        if (looksLikeAnOption) {
            String typed = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            Optional<String> meant = closest(typed, visibleOptionNames(command));
            if (meant.isEmpty() && command.parent() == null) {
                // fs -m MODEL -p TEXT, as llama-cli is called: the options belong to a command.
                CommandLine run = command.subcommands().get("run");
                if (run != null && run.getCommandSpec().findOption(typed) != null) {
                    meant = Optional.of("fs run " + typed);
                }
            }
            return "unknown option '" + typed + "'" + didYouMean(meant);
        }
        if (command.parent() == null) {
            List<String> commands = new ArrayList<>();
            for (Map.Entry<String, CommandLine> sub : command.subcommands().entrySet()) {
                if (!sub.getValue().getCommandSpec().usageMessage().hidden()) commands.add(sub.getKey());
            }
            return "unknown command '" + arg + "'" + didYouMean(closest(arg, commands));
        }
        return "unexpected argument '" + arg + "'";
    }

    private static String missing(MissingParameterException e) {
        ArgSpec first = e.getMissing().getFirst();
        // picocli says "Missing required option" for one left out, "... parameter for option" for one without value.
        if (first.isPositional() || e.getMessage().startsWith("Missing required option")) {
            return name(first) + " is required";
        }
        return name(first) + " needs a value (" + first.paramLabel() + ")";
    }

    /** Why {@code value} is not one: picocli's "is not an int" in plain words, a converter's own reason as it is. */
    private static String why(ArgSpec arg, String value, TypeConversionException e) {
        Class<?> type = arg.auxiliaryTypes()[0];
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "'" + value + "' is not an integer";
        }
        if (type == float.class || type == Float.class || type == double.class || type == Double.class) {
            return "'" + value + "' is not a number";
        }
        return e.getMessage();
    }

    private static List<String> visibleOptionNames(CommandSpec command) {
        List<String> names = new ArrayList<>();
        for (OptionSpec option : command.options()) {
            if (!option.hidden()) names.addAll(List.of(option.names()));
        }
        return names;
    }

    private static String didYouMean(Optional<String> meant) {
        return meant.map(name -> " (did you mean '" + name + "'?)").orElse("");
    }

    /**
     * The name {@code typed} most likely meant, dashes aside: one a typo or two away (a swap of neighbours is one; none
     * for two letters, where every other short option is a typo away), else one that it begins with or that begins
     * with it (--temperature for --temp); the first of equals.
     */
    static Optional<String> closest(String typed, List<String> names) {
        String word = withoutDashes(typed);
        int allowed = word.length() <= 2 ? 0 : word.length() <= 4 ? 1 : 2;
        String best = null;
        int bestScore = Integer.MAX_VALUE;
        for (String name : names) {
            String candidate = withoutDashes(name);
            int distance = editDistance(word, candidate);
            int score = distance <= allowed ? distance
                    : Math.min(word.length(), candidate.length()) >= 4
                            && (word.startsWith(candidate) || candidate.startsWith(word)) ? allowed + 1
                    : Integer.MAX_VALUE;
            if (score < bestScore) {
                best = name;
                bestScore = score;
            }
        }
        return Optional.ofNullable(best);
    }

    private static String withoutDashes(String name) {
        int start = 0;
        while (start < name.length() && name.charAt(start) == '-') start++;
        return name.substring(start);
    }

    /** Edits (insert, delete, replace, swap two neighbours) from {@code a} to {@code b}: optimal string alignment. */
    static int editDistance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) d[i][0] = i;
        for (int j = 0; j <= b.length(); j++) d[0][j] = j;
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int replace = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + replace);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
