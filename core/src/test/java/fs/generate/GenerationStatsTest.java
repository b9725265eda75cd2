package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GenerationStatsTest {
    @Test
    void ratesAreTokensPerSecondOfEachPhase() {
        GenerationStats stats = new GenerationStats(12, 0, 500_000_000L, 16, 15, 3_000_000_000L);
        assertEquals(24.0, stats.promptTokensPerSecond(), 1e-9);
        assertEquals(5.0, stats.decodeTokensPerSecond(), 1e-9);
        assertEquals(String.format("prompt:     12 tokens in 0.500 s (24.00 tok/s)%n"
                + "generation: 16 tokens (15 forwards) in 3.000 s (5.00 tok/s)"), stats.summary());
    }

    @Test
    void aSumAddsEachCountAndTimeSoItsRatesAreOverTheWhole() {
        GenerationStats sum = new GenerationStats(12, 0, 500_000_000L, 16, 15, 3_000_000_000L)
                .plus(new GenerationStats(4, 30, 300_000_000L, 6, 5, 1_000_000_000L));
        assertEquals(new GenerationStats(16, 30, 800_000_000L, 22, 20, 4_000_000_000L), sum);
        assertEquals(20.0, sum.promptTokensPerSecond(), 1e-9);
        assertEquals(5.0, sum.decodeTokensPerSecond(), 1e-9);
    }

    @Test
    void reusedTokensAreMentionedAndAnEmptyPhaseHasNoRate() {
        GenerationStats stats = new GenerationStats(3, 40, 1_000_000_000L, 0, 0, 0L);
        assertEquals(String.format("prompt:     3 tokens in 1.000 s (3.00 tok/s, 40 reused from the cache)%n"
                + "generation: 0 tokens (0 forwards) in 0.000 s (0.00 tok/s)"), stats.summary());
    }
}
