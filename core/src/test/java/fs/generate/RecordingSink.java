package fs.generate;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A sink that records what a {@link Scheduler} delivers to one request, and the thread it delivers on: for the tests
 * that run requests through a scheduler and compare each with what it gets alone.
 */
public final class RecordingSink implements TokenSink {
    private static final long TIMEOUT_SECONDS = 60;

    final List<Integer> tokens = new ArrayList<>();
    final List<TokenLogprobs> logprobs = new ArrayList<>();
    final CompletableFuture<StopReason> done = new CompletableFuture<>();
    volatile GenerationStats stats;
    volatile Thread thread;
    volatile boolean calledAfterEnd;

    /** Submits each prompt greedily for {@code maxTokens} to {@code scheduler} at once; the ids each got, in order. */
    public static List<int[]> greedy(Scheduler scheduler, List<int[]> prompts, int maxTokens) throws Exception {
        List<RecordingSink> sinks = new ArrayList<>();
        for (int[] prompt : prompts) {
            RecordingSink sink = new RecordingSink();
            scheduler.submit(prompt, SamplingParams.greedy(), maxTokens, new int[0], sink);
            sinks.add(sink);
        }
        List<int[]> ids = new ArrayList<>();
        for (RecordingSink sink : sinks) {
            sink.await();
            ids.add(sink.ids());
        }
        return ids;
    }

    @Override
    public synchronized void onToken(int id, TokenLogprobs logprobs) {
        thread = Thread.currentThread();
        if (done.isDone()) calledAfterEnd = true;
        tokens.add(id);
        this.logprobs.add(logprobs);
    }

    @Override
    public void onDone(StopReason reason, GenerationStats stats) {
        if (done.isDone()) calledAfterEnd = true;
        this.stats = stats;
        done.complete(reason);
    }

    @Override
    public void onError(RuntimeException e) {
        if (done.isDone()) calledAfterEnd = true;
        done.completeExceptionally(e);
    }

    /** How the request ended, waiting for it at most a minute; its failure is thrown. */
    public StopReason await() throws Exception {
        return done.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    /** The ids delivered so far. */
    public synchronized int[] ids() {
        return tokens.stream().mapToInt(Integer::intValue).toArray();
    }
}
