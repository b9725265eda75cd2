package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * A command line that names a command is read with that command alone (picocli's reading of every command's options
 * was a third of its start-up); one that names none, or help, or a misspelt command, with every command.
 */
class CommandLineSubcommandsTest {
    private static Set<String> subcommands(String... args) {
        return Main.commandLine(args).getSubcommands().keySet();
    }

    @Test
    void aNamedCommandIsTheOnlyOneAndAnAliasNamesItsCommand() {
        assertEquals(Set.of("run"), subcommands("run", "MODEL", "-p", "hi"));
        assertEquals(Set.of("list", "ls"), subcommands("ls"));
        assertEquals(Set.of("list", "ls"), subcommands("list"));
    }

    @Test
    void noCommandHelpOrAMisspeltOneGetsEveryCommand() {
        Set<String> every = Main.commandLine().getSubcommands().keySet();
        // Each command in Main.COMMANDS once by its name, and list also as ls.
        assertEquals(Main.COMMANDS.size() + 1, every.size(), every.toString());
        assertTrue(every.containsAll(Set.of("run", "embed", "rerank", "help", "ls")), every.toString());
        for (List<String> args : List.of(List.<String>of(), List.of("--help"), List.of("help", "run"), List.of("rnu"))) {
            assertEquals(every, subcommands(args.toArray(String[]::new)), args.toString());
        }
    }

    @Test
    void aCommandReadAloneListsTheSameHelpAsAmongEveryCommand() {
        for (String command : List.of("run", "bench", "serve", "ls")) {
            assertEquals(help(Main.commandLine(), command), help(Main.commandLine(command), command), command);
        }
    }

    private static String help(CommandLine fs, String command) {
        StringWriter text = new StringWriter();
        fs.getSubcommands().get(command).usage(new PrintWriter(text));
        return text.toString();
    }
}
