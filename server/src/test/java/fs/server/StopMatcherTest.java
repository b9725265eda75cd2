package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class StopMatcherTest {

    @Test
    void aStopStringSplitAcrossPiecesNeverShows() {
        StopMatcher stops = new StopMatcher(List.of("END"));
        assertEquals("abc ", stops.push("abc E"));
        assertEquals("", stops.push("N"), "EN may still become END");
        assertEquals("", stops.push("D and more"));
        assertTrue(stops.stopped());
        assertEquals("", stops.push("after"));
        assertEquals("", stops.flush());
    }

    @Test
    void heldBackTextThatIsNotAStopIsReleased() {
        StopMatcher stops = new StopMatcher(List.of("END"));
        assertEquals("x", stops.push("xE"));
        assertEquals("EX", stops.push("X"));
        assertEquals("", stops.push("EN"));
        assertEquals("EN", stops.flush(), "the text ended before the stop string did");
        assertFalse(stops.stopped());
    }

    @Test
    void theEarliestOfSeveralStopsWins() {
        StopMatcher stops = new StopMatcher(List.of("world", "lo"));
        assertEquals("hel", stops.push("hello world"));
        assertTrue(stops.stopped());
    }

    @Test
    void itTellsWhichStopStringMatched() {
        StopMatcher stops = new StopMatcher(List.of("world", "lo", "l"));
        assertEquals(null, stops.matched());
        assertEquals("he", stops.push("hello world"));
        assertEquals("l", stops.matched(), "the earliest in the text; of two there, the first given");
        StopMatcher split = new StopMatcher(List.of("END", "STOP"));
        split.push("a ST");
        assertEquals(null, split.matched(), "a stop string's start is not yet a match");
        split.push("OP b");
        assertEquals("STOP", split.matched());
    }

    @Test
    void withoutStopsEverythingPassesAtOnce() {
        StopMatcher stops = new StopMatcher(List.of());
        assertEquals("abc", stops.push("abc"));
        assertEquals("", stops.flush());
    }

    /** However the text is cut into pieces, the output is the text up to the first stop string. */
    @Test
    void anyCutGivesTheTextBeforeTheFirstStop() {
        SplittableRandom random = new SplittableRandom(7);
        String alphabet = "ab\n<";
        for (int round = 0; round < 2000; round++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(30);
            for (int i = 0; i < length; i++) text.append(alphabet.charAt(random.nextInt(alphabet.length())));
            List<String> stopList = List.of("aab", "\n<b", "bbbb");
            int first = -1;
            for (String stop : stopList) {
                int at = text.indexOf(stop);
                if (at >= 0 && (first < 0 || at < first)) first = at;
            }
            String expected = first >= 0 ? text.substring(0, first) : text.toString();

            StopMatcher stops = new StopMatcher(stopList);
            StringBuilder out = new StringBuilder();
            int i = 0;
            while (i < text.length()) {
                int end = Math.min(text.length(), i + 1 + random.nextInt(4));
                out.append(stops.push(text.substring(i, end)));
                i = end;
            }
            out.append(stops.flush());
            assertEquals(expected, out.toString(), "text " + text);
            assertEquals(first >= 0, stops.stopped(), "text " + text);
        }
    }
}
