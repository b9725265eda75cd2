package fs.server;

import fs.generate.GenerationStats;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * The server's counters, and their Prometheus text exposition for {@code GET /metrics} (names as llama-server's,
 * under {@code fs_}). Counters are updated from any thread.
 */
final class ServerMetrics {
    private final LongAdder requests = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder promptTokens = new LongAdder();
    private final LongAdder promptNanos = new LongAdder();
    private final LongAdder generatedTokens = new LongAdder();
    private final LongAdder decodeSteps = new LongAdder();
    private final LongAdder decodeNanos = new LongAdder();

    /** A completion request arrived (valid or not). */
    void requestReceived() {
        requests.increment();
    }

    /** A request was turned away: the queue was full, or the engine was closing. */
    void requestRejected() {
        rejected.increment();
    }

    void generationDone(GenerationStats stats) {
        promptTokens.add(stats.promptTokens());
        promptNanos.add(stats.promptNanos());
        generatedTokens.add(stats.generatedTokens());
        decodeSteps.add(stats.decodeSteps());
        decodeNanos.add(stats.decodeNanos());
    }

    /** The text format, version 0.0.4. */
    String exposition(CompletionEngine.Load load) {
        StringBuilder out = new StringBuilder();
        metric(out, "fs_requests_total", "counter", "Completion requests received.", requests.sum());
        metric(out, "fs_requests_rejected_total", "counter", "Requests refused with 503: the queue was full, or the server was shutting down.",
                rejected.sum());
        metric(out, "fs_prompt_tokens_total", "counter", "Prompt tokens processed (not counting cached ones).",
                promptTokens.sum());
        metric(out, "fs_prompt_seconds_total", "counter", "Time spent processing prompts.", promptNanos.sum() / 1e9);
        metric(out, "fs_tokens_predicted_total", "counter", "Tokens generated.", generatedTokens.sum());
        metric(out, "fs_tokens_predicted_seconds_total", "counter", "Time spent generating tokens.",
                decodeNanos.sum() / 1e9);
        metric(out, "fs_prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
                rate(promptTokens.sum(), promptNanos.sum()));
        metric(out, "fs_predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
                rate(decodeSteps.sum(), decodeNanos.sum()));
        metric(out, "fs_slots", "gauge", "Requests that can run at once.", load.slots());
        metric(out, "fs_requests_processing", "gauge", "Requests running (busy slots).", load.busy());
        metric(out, "fs_requests_deferred", "gauge", "Requests waiting in the queue.", load.queued());
        return out.toString();
    }

    private static double rate(long count, long nanos) {
        return nanos == 0 ? 0 : count / (nanos / 1e9);
    }

    private static void metric(StringBuilder out, String name, String type, String help, double value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        out.append(name).append(' ');
        if (value == Math.rint(value) && Math.abs(value) < 1e15) out.append((long) value);
        else out.append(String.format(Locale.ROOT, "%.6g", value));
        out.append('\n');
    }
}
