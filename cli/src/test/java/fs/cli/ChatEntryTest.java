package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ChatEntryTest {

    @Test
    void eachCommandAnswersToItsNamesAndOllamas() {
        assertEquals(ChatEntry.Command.HELP, ChatEntry.ofLine("/help"));
        assertEquals(ChatEntry.Command.HELP, ChatEntry.ofLine("/?"));
        assertEquals(ChatEntry.Command.RESET, ChatEntry.ofLine("/reset"));
        assertEquals(ChatEntry.Command.RESET, ChatEntry.ofLine("/clear"));
        assertEquals(ChatEntry.Command.EXIT, ChatEntry.ofLine("/exit"));
        assertEquals(ChatEntry.Command.EXIT, ChatEntry.ofLine("/bye"));
    }

    @Test
    void theFirstWordNamesTheCommandAndSpaceAroundItDoesNotMatter() {
        assertEquals(ChatEntry.Command.EXIT, ChatEntry.ofLine("  /exit  "));
        assertEquals(ChatEntry.Command.RESET, ChatEntry.ofLine("/reset now please"));
        assertEquals(new ChatEntry.UnknownCommand("/exits"), ChatEntry.ofLine("/exits"));
        assertEquals(new ChatEntry.UnknownCommand("/Help"), ChatEntry.ofLine("/Help"), "names are exact");
    }

    @Test
    void aLineStartingWithASlashIsACommandEvenWhenItReadsLikeAMessage() {
        assertEquals(new ChatEntry.UnknownCommand("/usr/bin"), ChatEntry.ofLine("/usr/bin is where programs live"));
        assertEquals(new ChatEntry.UnknownCommand("/"), ChatEntry.ofLine("/"));
    }

    @Test
    void anyOtherLineIsAMessageKeptAsTyped() {
        assertEquals(new ChatEntry.Message("  Hello /help "), ChatEntry.ofLine("  Hello /help "));
        assertEquals(new ChatEntry.Message("a / b"), ChatEntry.ofLine("a / b"));
    }
}
