package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ReasoningSplitterTest {

    /** Pushes each piece, then flushes; returns {reasoning, content} as the client would assemble them. */
    private static String[] split(String... pieces) {
        ReasoningSplitter splitter = new ReasoningSplitter();
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        for (String piece : pieces) {
            ReasoningSplitter.Delta delta = splitter.push(piece);
            reasoning.append(delta.reasoning());
            content.append(delta.content());
        }
        ReasoningSplitter.Delta rest = splitter.flush();
        reasoning.append(rest.reasoning());
        content.append(rest.content());
        return new String[] {reasoning.toString(), content.toString()};
    }

    @Test
    void qwen3ThinkingGoesToTheReasoningAndTheLayoutWhitespaceIsDropped() {
        String[] parts = split("<think>\nLet me", " think.\n", "</think>\n\nThe answer", " is 4.");
        assertEquals("Let me think.", parts[0]);
        assertEquals("The answer is 4.", parts[1]);
    }

    @Test
    void tagsSplitAcrossPiecesAreRecognised() {
        String[] parts = split("<th", "ink>", "a b", "</th", "ink>", " c");
        assertEquals("a b", parts[0]);
        assertEquals("c", parts[1]);
    }

    @Test
    void anAnswerWithoutAThinkBlockIsAllContent() {
        String[] parts = split("  Hello", " <think> is just text");
        assertEquals("", parts[0]);
        assertEquals("  Hello <think> is just text", parts[1]);
    }

    @Test
    void anEmptyThinkBlockGivesNoReasoning() {
        String[] parts = split("<think>\n\n</think>\n\n", "Hi");
        assertEquals("", parts[0]);
        assertEquals("Hi", parts[1]);
    }

    @Test
    void reasoningCutShortStaysReasoning() {
        String[] parts = split("<think>\nstill thinking \n");
        assertEquals("still thinking", parts[0]);
        assertEquals("", parts[1]);
    }

    @Test
    void textThatOnlyLookedLikeATagIsContent() {
        String[] parts = split("<thi");
        assertEquals("<thi", parts[1]);
        parts = split("<thx", "y");
        assertEquals("<thxy", parts[1]);
    }

    @Test
    void whitespaceInsideTheReasoningIsKept() {
        String[] parts = split("<think>a", " \n", "b</think>c");
        assertEquals("a \nb", parts[0]);
        assertEquals("c", parts[1]);
    }
}
