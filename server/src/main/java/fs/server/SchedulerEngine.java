package fs.server;

import fs.generate.GenerationStats;
import fs.generate.QueueFullException;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.generate.StopReason;
import fs.generate.TokenConstraint;
import fs.generate.TokenLogprobs;
import fs.generate.TokenSink;

/**
 * fs serve's engine: a {@link Scheduler}, whose slots decode together in each forward (continuous batching, chunked
 * prefill, prefix reuse per slot, a bounded queue). This class only translates: the scheduler's refusals become
 * {@link UnavailableException}s (HTTP 503), and a check runs before each token reaches its sink.
 */
public final class SchedulerEngine implements CompletionEngine {
    private final Scheduler scheduler;
    private final int[] stopIds;
    private final Runnable beforeEachToken;

    private SchedulerEngine(Scheduler scheduler, int[] stopIds, Runnable beforeEachToken) {
        this.scheduler = scheduler;
        this.stopIds = stopIds.clone();
        this.beforeEachToken = beforeEachToken;
    }

    /**
     * An engine over {@code scheduler}, which it closes when closed. Generation stops at any of {@code stopIds};
     * {@code beforeEachToken} runs on the scheduler's thread before each token reaches its sink, and what it throws
     * fails that request only (the CLI checks there that the weights file did not change).
     */
    public static SchedulerEngine over(Scheduler scheduler, int[] stopIds, Runnable beforeEachToken) {
        return new SchedulerEngine(scheduler, stopIds, beforeEachToken);
    }

    @Override
    public Handle submit(int[] prompt, SamplingParams params, int maxTokens, int topLogprobs,
            TokenConstraint constraint, TokenSink sink) {
        TokenSink checked = new TokenSink() {
            @Override
            public void onToken(int id, TokenLogprobs logprobs) {
                beforeEachToken.run(); // a throw ends this request with onError, as the scheduler promises
                sink.onToken(id, logprobs);
            }

            @Override
            public void onDone(StopReason reason, GenerationStats stats) {
                sink.onDone(reason, stats);
            }

            @Override
            public void onError(RuntimeException e) {
                sink.onError(e);
            }
        };
        try {
            return scheduler.submit(prompt, params, maxTokens, stopIds, topLogprobs, constraint, checked)::cancel;
        } catch (QueueFullException e) {
            throw new UnavailableException(e.getMessage());
        } catch (IllegalStateException e) {
            throw new UnavailableException("the server is shutting down");
        }
    }

    @Override
    public int[] stopIds() {
        return stopIds.clone();
    }

    @Override
    public int contextLength() {
        return scheduler.config().contextLength();
    }

    @Override
    public Load load() {
        return new Load(scheduler.config().slots(), scheduler.busySlots(), scheduler.waiting());
    }

    @Override
    public void close() {
        scheduler.close();
    }
}
