package fs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ProgressTextTest {

    @Test
    void sizesReadLikeTheHubShowsThem() {
        assertEquals("999 B", ProgressText.bytes(999));
        assertEquals("40.0 kB", ProgressText.bytes(40_000));
        assertEquals("1.2 MB", ProgressText.bytes(1_234_567));
        assertEquals("1.50 GB", ProgressText.bytes(1_503_238_553));
    }

    @Test
    void aRateIsMegabytesPerSecondAndAnInstantCountsAsAMillisecond() {
        assertEquals("2.5 MB/s", ProgressText.rate(5_000_000, 2.0));
        assertEquals("1.0 MB/s", ProgressText.rate(1_000, 0.0));
    }

    @Test
    void theBarIsFilledInProportionAndFullWhenTheTotalIsUnknown() {
        assertEquals("##--", ProgressText.bar(50, 100, 4));
        assertEquals("####", ProgressText.bar(150, 100, 4), "never more than full");
        assertEquals("----", ProgressText.bar(0, 100, 4));
        assertEquals("####", ProgressText.bar(7, 0, 4));
    }
}
