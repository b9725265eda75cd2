package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** -c is shared by every command that runs a model, but means the window in the two that cut a text into windows. */
class ContextHelpTest {

    /** The description of -c in the command's help, its wrapped lines joined. */
    private static String contextHelp(String command) {
        CliRun run = CliRun.of(command, "--help");
        assertEquals(0, run.exitCode(), run.err());
        String help = run.out();
        int start = help.indexOf("-c, --ctx, --ctx-size=N");
        assertTrue(start >= 0, help);
        // The next option's line: picocli indents a short name of more than one letter (-ctk) further than -c.
        Matcher next = Pattern.compile(System.lineSeparator() + " +-").matcher(help);
        int end = next.find(start) ? next.start() : help.length();
        return help.substring(start, end).replaceAll("\\s+", " ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"run", "chat", "serve", "bench", "logits"})
    void elsewhereItIsTheContextLength(String command) {
        String help = contextHelp(command);
        assertTrue(help.contains("Context length: positions in the KV cache (default: min(max_position_embeddings, "
                + "4096))."), help);
        assertFalse(help.contains("window"), help);
    }

    @ParameterizedTest
    @ValueSource(strings = {"perplexity", "imatrix"})
    void inPerplexityAndImatrixItIsTheWindow(String command) {
        String help = contextHelp(command);
        assertTrue(help.contains("Window length: the text is cut into windows of N tokens, each run from an empty "
                + "context (default: 512, as in llama.cpp)."), help);
        assertFalse(help.contains("KV cache"), help);
    }
}
