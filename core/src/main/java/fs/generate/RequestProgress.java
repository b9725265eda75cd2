package fs.generate;

import fs.FsException;

/**
 * One request's way through generation, the same in the {@link Generator} (one sequence on the caller's thread) and
 * the {@link Scheduler} (many, on its thread): whether its prompt fits, its token limit, what a chosen token does (a
 * stop token or a stop asked for ends it undelivered; any other is delivered, and the one that reaches the limit is
 * the last), its counts and times, and its {@link GenerationStats}. Not thread-safe: the loop that runs the request
 * owns it.
 */
final class RequestProgress {
    private final int promptLength;
    private final int maxTokens;
    private final int limit;
    private final int[] stopIds;
    private int reused;
    private int generated;
    private int decodeSteps;
    private long start;
    private long prefillEnd;

    /**
     * Progress of a request for up to {@code maxTokens} new tokens (negative: until a stop token or the end of a
     * context of {@code contextLength}) after a prompt of {@code promptLength}, ending at any of {@code stopIds}.
     */
    RequestProgress(int promptLength, int maxTokens, int contextLength, int[] stopIds) {
        this.promptLength = promptLength;
        this.maxTokens = maxTokens;
        this.limit = maxTokens >= 0 ? maxTokens : contextLength - promptLength;
        this.stopIds = stopIds;
    }

    /**
     * Throws the user-facing error when a prompt of {@code promptTokens} plus {@code maxTokens} (if ≥ 0) cannot fit a
     * context of {@code contextLength}: {@code maxTokensName} names the limit ("" or " (-n)") and {@code hint} ends the
     * sentence (how to make room, or "").
     */
    static void checkFits(int promptTokens, int maxTokens, int contextLength, String maxTokensName, String hint) {
        if (promptTokens < 1) throw new FsException("the prompt is empty: there is nothing to generate from");
        if (promptTokens > contextLength || (maxTokens >= 0 && (long) promptTokens + maxTokens > contextLength)) {
            String wanted = maxTokens >= 0
                    ? promptTokens + " prompt tokens + " + maxTokens + " new tokens" + maxTokensName
                    : promptTokens + " prompt tokens";
            throw new FsException(wanted + " do not fit the context of " + contextLength + " tokens" + hint);
        }
    }

    /** The request starts now, with {@code reused} of its prompt's tokens already in its sequence's cache. */
    void started(int reused, long now) {
        this.reused = reused;
        this.start = now;
    }

    /** The prompt has run; the reason the request ends before choosing anything (a limit of 0), or null. */
    StopReason prefilled(long now) {
        prefillEnd = now;
        return limit == 0 ? limitReason() : null;
    }

    boolean prefillDone() {
        return prefillEnd != 0;
    }

    /** A decode forward ran (for the token before the next choice). */
    void decoded() {
        decodeSteps++;
    }

    /**
     * What the chosen {@code token} does: the reason the request ends without delivering it (a stop token, or a stop
     * asked for: {@code stopAsked}), or null: it is to be delivered ({@link #delivered}).
     */
    StopReason endsBefore(int token, boolean stopAsked) {
        for (int stop : stopIds) if (stop == token) return StopReason.END_OF_SEQUENCE;
        return stopAsked ? StopReason.CANCELLED : null;
    }

    /** Counts a delivered token; the reason the request ends after it (its limit), or null: it goes on. */
    StopReason delivered() {
        generated++;
        return generated == limit ? limitReason() : null;
    }

    /** The tokens delivered so far. */
    int generated() {
        return generated;
    }

    /** The most tokens this request may deliver. */
    int limit() {
        return limit;
    }

    private StopReason limitReason() {
        return maxTokens >= 0 ? StopReason.TOKEN_LIMIT : StopReason.CONTEXT_FULL;
    }

    /**
     * The request's counts and times, ended {@code now}, with {@code promptRun} of its prompt's tokens in the cache
     * (all of them once the prompt has run, fewer when it ended during its prompt).
     */
    GenerationStats stats(int promptRun, long now) {
        long started = start != 0 ? start : now;
        long promptEnd = prefillEnd != 0 ? prefillEnd : now;
        int prompted = prefillEnd != 0 ? promptLength - reused : promptRun - reused;
        return new GenerationStats(Math.max(0, prompted), reused, promptEnd - started, generated, decodeSteps,
                now - promptEnd);
    }
}
