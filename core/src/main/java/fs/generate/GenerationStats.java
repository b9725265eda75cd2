package fs.generate;

import java.util.Locale;

/**
 * Timings of one generation, counted as llama.cpp counts them: the prompt phase is the batched forward of the prompt
 * tokens that were not already in the cache; the generation phase is the single-token forwards that followed, with
 * their sampling. The last generated token is chosen but never run, so n tokens take n - 1 forwards; the speed is
 * forwards per second, as llama.cpp's "eval" rate.
 */
public record GenerationStats(
        int promptTokens, int cachedTokens, long promptNanos, int generatedTokens, int decodeSteps, long decodeNanos) {

    /** Both generations' counts and times together, as for the whole of a chat. */
    public GenerationStats plus(GenerationStats other) {
        return new GenerationStats(promptTokens + other.promptTokens, cachedTokens + other.cachedTokens,
                promptNanos + other.promptNanos, generatedTokens + other.generatedTokens,
                decodeSteps + other.decodeSteps, decodeNanos + other.decodeNanos);
    }

    public double promptTokensPerSecond() {
        return rate(promptTokens, promptNanos);
    }

    public double decodeTokensPerSecond() {
        return rate(decodeSteps, decodeNanos);
    }

    private static double rate(int tokens, long nanos) {
        return nanos == 0 ? 0 : tokens / (nanos / 1e9);
    }

    /** Two lines for stderr, e.g. {@code prompt: 12 tokens in 0.350 s (34.29 tok/s)}. */
    public String summary() {
        String cached = cachedTokens > 0 ? ", " + cachedTokens + " reused from the cache" : "";
        return String.format(Locale.ROOT, "prompt:     %d tokens in %.3f s (%.2f tok/s%s)%n"
                        + "generation: %d tokens (%d forwards) in %.3f s (%.2f tok/s)",
                promptTokens, promptNanos / 1e9, promptTokensPerSecond(), cached,
                generatedTokens, decodeSteps, decodeNanos / 1e9, decodeTokensPerSecond());
    }
}
