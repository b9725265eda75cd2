package fs.eval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import fs.FsException;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class WindowsTest {
    private static final int[] TOKENS = IntStream.range(100, 123).toArray(); // 23 tokens

    @Test
    void windowsAreConsecutiveAndTheTailIsLeftOut() {
        Windows windows = Windows.of(TOKENS, 5, 0, "text");
        assertEquals(4, windows.count(), "23 / 5");
        assertArrayEquals(new int[] {100, 101, 102, 103, 104}, windows.window(0));
        assertArrayEquals(new int[] {115, 116, 117, 118, 119}, windows.window(3));
        assertThrows(IndexOutOfBoundsException.class, () -> windows.window(4));
    }

    @Test
    void theSecondHalfIsScoredAndTheLastPositionPredictsNothing() {
        Windows odd = Windows.of(TOKENS, 5, 0, "text");
        assertEquals(2, odd.firstScored());
        assertEquals(3, odd.lastScored());
        assertEquals(2, odd.scoredPerWindow(), "positions 2 and 3 predict tokens 3 and 4");

        Windows even = Windows.of(TOKENS, 8, 0, "text");
        assertEquals(4, even.firstScored());
        assertEquals(6, even.lastScored());
        assertEquals(3, even.scoredPerWindow(), "positions 4, 5 and 6 (llama.cpp's n_ctx - 1 - n_ctx/2)");
    }

    @Test
    void chunksLimitsTheWindows() {
        assertEquals(2, Windows.of(TOKENS, 5, 2, "text").count());
        assertEquals(4, Windows.of(TOKENS, 5, 99, "text").count());
    }

    @Test
    void aTextOfFewerThanTwoWindowsIsRefusedWhateverTheLimit() {
        assertEquals(2, Windows.of(TOKENS, 11, 0, "text").count(), "22 tokens of 23 make two windows");
        FsException e = assertThrows(FsException.class, () -> Windows.of(TOKENS, 12, 1, "-f short.txt"));
        assertEquals("-f short.txt has only 23 tokens: perplexity with a context of 12 needs at least 24 (two "
                + "windows); give a longer text or a smaller -c", e.getMessage());
    }

    @Test
    void theTokensAreCopied() {
        int[] tokens = TOKENS.clone();
        Windows windows = Windows.of(tokens, 5, 0, "text");
        tokens[0] = -1;
        assertEquals(100, windows.window(0)[0]);
    }
}
