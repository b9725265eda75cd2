package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ThinkFilterTest {

    /** Feeds the pieces one by one and returns everything shown, flush included. */
    private static String filter(String... pieces) {
        ThinkFilter filter = new ThinkFilter();
        StringBuilder shown = new StringBuilder();
        for (String piece : pieces) shown.append(filter.push(piece));
        return shown.append(filter.flush()).toString();
    }

    @Test
    void dropsTheThinkBlockAndTheWhitespaceAfterIt() {
        assertEquals("The answer.", filter("<think>\nLet me see.\n</think>\n\nThe answer."));
    }

    @Test
    void tagsSplitAcrossPiecesAreRecognised() {
        assertEquals("Hi there", filter("<th", "ink>reason", "ing</thi", "nk>", "\n", "\nHi", " there"));
    }

    @Test
    void everySplitOfTheTextGivesTheSameResult() {
        String text = "<think>a < b, so </think>\n\nYes: 1 < 2 and <thin is not a tag.";
        for (int i = 0; i <= text.length(); i++) {
            for (int j = i; j <= text.length(); j++) {
                assertEquals("Yes: 1 < 2 and <thin is not a tag.",
                        filter(text.substring(0, i), text.substring(i, j), text.substring(j)), "split at " + i + ", " + j);
            }
        }
    }

    @Test
    void textWithoutThinkingIsUnchanged() {
        assertEquals("  plain <b>text</b> <", filter("  plain <b>te", "xt</b> <"));
    }

    @Test
    void anUnfinishedThinkBlockShowsNothing() {
        assertEquals("before ", filter("before <think>still thinking when -n ran out"));
    }
}
