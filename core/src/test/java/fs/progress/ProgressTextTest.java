package fs.progress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ProgressTextTest {

    @Test
    void aRateIsMebibytesPerSecondAndAnInstantCountsAsAMillisecond() {
        assertEquals("2.5 MiB/s", ProgressText.rate(5L << 20, 2.0));
        assertEquals("1.0 MiB/s", ProgressText.rate(1 << 10, 0.0));
    }

    @Test
    void theBarIsFilledInProportionAndFullWhenTheTotalIsUnknown() {
        assertEquals("##--", ProgressText.bar(50, 100, 4));
        assertEquals("####", ProgressText.bar(150, 100, 4), "never more than full");
        assertEquals("----", ProgressText.bar(0, 100, 4));
        assertEquals("####", ProgressText.bar(7, 0, 4));
    }
}
