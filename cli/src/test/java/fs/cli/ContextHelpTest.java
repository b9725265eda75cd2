package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        int end = help.indexOf(System.lineSeparator() + "  -", start); // the next option's line
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
