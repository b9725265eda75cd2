package fs.server;

import fs.generate.TokenConstraint;
import fs.generate.TokenSink;
import fs.generate.GenerationStats;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An engine without a model, for tests of the HTTP layer: each request gets the same token ids, one every
 * {@code delayMillis}, on a thread of its own, and ends with END_OF_SEQUENCE (or CANCELLED). With {@code full} set,
 * every submit is refused as a full queue would refuse it. The last request's prompt and constraint are kept (the
 * script is played whether the constraint allows it or not).
 */
final class ScriptedEngine implements CompletionEngine {
    private final int[] ids;
    private final long delayNanos;
    private final long length; // tokens in an answer: the ids, played again and again
    final AtomicBoolean full = new AtomicBoolean();
    /** Counted down when a request is cancelled. */
    final CountDownLatch cancelled = new CountDownLatch(1);
    /** Counted down when a request has been given its first token. */
    final CountDownLatch started = new CountDownLatch(1);
    private volatile boolean closed;
    /** The prompt and the constraint (null: none) of the last request. */
    volatile int[] prompt;
    volatile TokenConstraint constraint;

    ScriptedEngine(int[] ids, long delayMillis) {
        this(ids, java.time.Duration.ofMillis(delayMillis), ids.length);
    }

    private ScriptedEngine(int[] ids, java.time.Duration delay, long length) {
        this.ids = ids.clone();
        this.delayNanos = delay.toNanos();
        this.length = length;
    }

    /** An engine whose answers are {@code ids} over and over, one token each {@code delay}, until cancelled. */
    static ScriptedEngine endless(int[] ids, java.time.Duration delay) {
        return new ScriptedEngine(ids, delay, Long.MAX_VALUE);
    }

    @Override
    public Handle submit(int[] prompt, SamplingParams params, int maxTokens, int topLogprobs,
            TokenConstraint constraint, TokenSink sink) {
        if (full.get()) throw new UnavailableException("the server is busy (scripted)");
        this.prompt = prompt.clone();
        this.constraint = constraint;
        AtomicBoolean stop = new AtomicBoolean();
        Thread.ofPlatform().daemon().start(() -> {
            long limit = maxTokens >= 0 ? Math.min(maxTokens, length) : length;
            int count = 0;
            while (count < limit) {
                if (stop.get() || closed) {
                    if (stop.get()) cancelled.countDown();
                    sink.onDone(StopReason.CANCELLED, stats(prompt, count));
                    return;
                }
                sink.onToken(ids[count++ % ids.length], null); // no model, no logprobs
                started.countDown();
                java.util.concurrent.locks.LockSupport.parkNanos(delayNanos);
            }
            sink.onDone(count < length ? StopReason.TOKEN_LIMIT : StopReason.END_OF_SEQUENCE,
                    stats(prompt, count));
        });
        return () -> stop.set(true);
    }

    private static GenerationStats stats(int[] prompt, int count) {
        return new GenerationStats(prompt.length, 0, 1, count, Math.max(0, count - 1), 1);
    }

    /** Qwen3's ends: <|im_end|> and <|endoftext|>. */
    @Override
    public int[] stopIds() {
        return new int[] {151645, 151643};
    }

    @Override
    public int contextLength() {
        return 1024;
    }

    @Override
    public Load load() {
        return new Load(1, 0, 0);
    }

    @Override
    public void close() {
        closed = true;
    }
}
