package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** --seed is shared by run, chat and serve; run and chat print the seed they drew, serve draws one per request. */
class SeedHelpTest {

    /** The description of --seed in the command's help, its wrapped lines joined. */
    private static String seedHelp(String command) {
        CliRun run = CliRun.of(command, "--help");
        assertEquals(0, run.exitCode(), run.err());
        String help = run.out();
        int start = help.indexOf("-s, --seed=S");
        assertTrue(start >= 0, help);
        Matcher nextOption = Pattern.compile("\\R +-").matcher(help); // a line that begins an option, indented
        assertTrue(nextOption.find(start), help);
        return help.substring(start, nextOption.start()).replaceAll("\\s+", " ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"run", "chat"})
    void runAndChatPrintTheSeedTheyDraw(String command) {
        assertEquals("-s, --seed=S Random seed (default: a random one, printed).", seedHelp(command));
    }

    @Test
    void serveDrawsOnePerRequestAndPrintsNone() {
        String help = seedHelp("serve");
        assertEquals("-s, --seed=S Seed of every request that sends none (default: a random one drawn for each "
                + "request).", help);
        assertFalse(help.contains("printed"), help);
    }
}
