package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import org.jline.terminal.Terminal;
import org.jline.terminal.impl.ExternalTerminal;
import org.junit.jupiter.api.Test;

/** The chat's JLine reader on a terminal whose keyboard is a byte stream (an xterm, as far as JLine can tell). */
class TerminalInputTest {

    private static ExternalTerminal terminal(String typed) throws IOException {
        return new ExternalTerminal("test", "xterm-256color",
                new ByteArrayInputStream(typed.getBytes(StandardCharsets.UTF_8)), new ByteArrayOutputStream(),
                StandardCharsets.UTF_8);
    }

    @Test
    void aLineComesBackAsTypedWithQuotesBackslashesAndExclamationMarks() throws Exception {
        // After a first line, "!!" and "!-1" would be history expansions in a shell (and in JLine by default).
        try (TerminalInput input = new TerminalInput(terminal("/reset\rsay !! and !-1 \\\\ \\n, don't \"quote\"\r"))) {
            assertEquals("/reset", input.readLine("> "));
            assertEquals("say !! and !-1 \\\\ \\n, don't \"quote\"", input.readLine("> "));
            assertNull(input.readLine("> "), "the end of the input");
        }
    }

    @Test
    void ctrlCWhileNoLineIsReadRequestsTheLatestStop() throws Exception {
        try (ExternalTerminal terminal = terminal(""); TerminalInput input = new TerminalInput(terminal)) {
            BooleanSupplier previous = input.stopOnCtrlC();
            BooleanSupplier current = input.stopOnCtrlC();
            assertFalse(current.getAsBoolean());
            terminal.raise(Terminal.Signal.INT);
            assertTrue(current.getAsBoolean());
            assertFalse(previous.getAsBoolean(), "an answer that already ended is not stopped again");
            assertFalse(input.stopOnCtrlC().getAsBoolean(), "each answer starts with no stop requested");
        }
    }
}
