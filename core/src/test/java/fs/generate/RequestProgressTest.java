package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import org.junit.jupiter.api.Test;

/** The stop and limit rules both generation loops follow, and the counts they report. */
class RequestProgressTest {
    private static final int[] STOPS = {7, 9};

    @Test
    void aStopTokenEndsBeforeDeliveryEvenWhenAStopIsAskedAndOtherTokensAreDeliveredUpToTheLimit() {
        RequestProgress p = new RequestProgress(5, 2, 100, STOPS);
        p.started(1, 10);
        assertNull(p.prefilled(20));
        assertEquals(StopReason.END_OF_SEQUENCE, p.endsBefore(9, true));
        assertEquals(StopReason.CANCELLED, p.endsBefore(3, true));
        assertNull(p.endsBefore(3, false));
        assertNull(p.delivered());
        p.decoded();
        assertEquals(StopReason.TOKEN_LIMIT, p.delivered());
        GenerationStats stats = p.stats(0, 50);
        assertEquals(new GenerationStats(4, 1, 10, 2, 1, 30), stats);
    }

    @Test
    void withoutAMaximumTheContextIsTheLimitAndAZeroLimitEndsAtTheEndOfThePrompt() {
        RequestProgress open = new RequestProgress(98, -1, 100, STOPS);
        assertEquals(2, open.limit());
        open.delivered();
        assertEquals(StopReason.CONTEXT_FULL, open.delivered());
        assertEquals(StopReason.TOKEN_LIMIT, new RequestProgress(5, 0, 100, STOPS).prefilled(1));
    }

    @Test
    void aRequestStoppedDuringItsPromptCountsThePromptTokensThatRan() {
        RequestProgress p = new RequestProgress(50, 4, 100, STOPS);
        p.started(10, 100);
        assertEquals(new GenerationStats(22, 10, 60, 0, 0, 0), p.stats(32, 160));
    }

    @Test
    void promptsThatDoNotFitGiveOneLineWithTheCallersHint() {
        FsException e = assertThrows(FsException.class,
                () -> RequestProgress.checkFits(90, 20, 100, " (-n)", "; raise --ctx"));
        assertEquals("90 prompt tokens + 20 new tokens (-n) do not fit the context of 100 tokens; raise --ctx",
                e.getMessage());
        assertTrue(assertThrows(FsException.class, () -> RequestProgress.checkFits(0, 1, 100, "", ""))
                .getMessage().contains("empty"));
        RequestProgress.checkFits(90, 10, 100, "", ""); // exactly full fits
    }
}
