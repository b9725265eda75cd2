package fs.server;

import fs.FsException;
import fs.generate.GenerationStats;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.model.Qwen3Model;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs one request at a time on one {@link Generator}, the others waiting in a bounded queue: the simplest engine,
 * and the reference for a batched one. One platform thread, started by {@link #start}, owns the model (every forward
 * runs on it) and the generator; other threads only queue requests and read the counters.
 *
 * <p>Consecutive greedy requests with the same repetition penalty share one generator, so a chat's next turn reuses
 * the KV cache of the prefix it shares with the previous request (as {@code fs chat} does); a sampled request gets a
 * fresh generator, whose random stream starts at the request's seed, and runs its prompt from position 0.
 */
public final class SerialEngine implements CompletionEngine {
    /** How often the idle engine thread looks whether the engine was closed. */
    private static final long POLL_MILLIS = 50;
    private static final GenerationStats NOTHING_RAN = new GenerationStats(0, 0, 0, 0, 0, 0);

    private final Qwen3Model model;
    private final int[] stopIds;
    private final Runnable beforeEachToken;
    private final BlockingQueue<Job> queue;
    private final Thread thread;
    private volatile boolean closed;
    private volatile Job running;

    // Engine thread only.
    private Generator generator;
    private SamplingParams generatorParams;

    private SerialEngine(Qwen3Model model, int[] stopIds, int queueCapacity, Runnable beforeEachToken) {
        if (queueCapacity < 1) throw new IllegalArgumentException("queue capacity " + queueCapacity + " < 1");
        this.model = model;
        this.stopIds = stopIds.clone();
        this.beforeEachToken = beforeEachToken;
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
        this.thread = Thread.ofPlatform().name("fs-engine").unstarted(this::run);
    }

    /**
     * An engine over {@code model}, which from now on only its thread may touch. Generation stops at any of
     * {@code stopIds}; up to {@code queueCapacity} requests wait while one runs; {@code beforeEachToken} runs before
     * each token reaches its sink, and what it throws fails the request (the CLI checks there that the weights file
     * did not change).
     */
    public static SerialEngine start(Qwen3Model model, int[] stopIds, int queueCapacity, Runnable beforeEachToken) {
        SerialEngine engine = new SerialEngine(model, stopIds, queueCapacity, beforeEachToken);
        engine.thread.start();
        return engine;
    }

    @Override
    public Handle submit(int[] prompt, SamplingParams params, int maxTokens, TokenSink sink) {
        Job job = new Job(prompt.clone(), params, maxTokens, sink);
        // Under the lock, so that close() cannot drain the queue between the check and the offer.
        synchronized (this) {
            if (closed) throw new UnavailableException("the server is shutting down");
            if (!queue.offer(job)) {
                throw new UnavailableException("the server is busy: 1 request is running and " + queue.size()
                        + " are waiting, the most it queues; retry later");
            }
        }
        return job;
    }

    @Override
    public int contextLength() {
        return model.shape().contextLength();
    }

    @Override
    public Load load() {
        return new Load(1, running != null ? 1 : 0, queue.size());
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        while (!closed) {
            Job job;
            try {
                job = queue.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                job = null; // nobody interrupts this thread; closing is signalled by the flag
            }
            if (job == null) continue;
            if (closed) {
                shutDown(job);
                break;
            }
            running = job;
            try {
                runJob(job);
            } finally {
                running = null;
            }
        }
        // closed is set and submit() takes no more: what is left in the queue will never run.
        for (Job left; (left = queue.poll()) != null; ) shutDown(left);
    }

    private static void shutDown(Job job) {
        job.sink.onError(new UnavailableException("the server is shutting down"));
    }

    private void runJob(Job job) {
        if (job.cancelled.get()) {
            job.sink.onDone(StopReason.CANCELLED, NOTHING_RAN);
            return;
        }
        try {
            Generator.Generation generation = generatorFor(job.params).generate(job.prompt, job.maxTokens, id -> {
                beforeEachToken.run();
                job.sink.onToken(id);
            }, () -> job.cancelled.get() || closed);
            job.sink.onDone(generation.stopReason(), generation.stats());
        } catch (RuntimeException | Error e) {
            // The generator's idea of the cache may be wrong now: the next request starts from position 0.
            generator = null;
            job.sink.onError(e instanceof RuntimeException r ? r : new FsException("internal error: " + e, e));
        }
    }

    private Generator generatorFor(SamplingParams params) {
        boolean reusable = generator != null && params.isGreedy() && generatorParams.isGreedy()
                && params.repeatPenalty() == generatorParams.repeatPenalty();
        if (!reusable) {
            generator = new Generator(model, stopIds, params);
            generatorParams = params;
        }
        return generator;
    }

    /** A queued or running request; its handle cancels it. */
    private static final class Job implements Handle {
        final int[] prompt;
        final SamplingParams params;
        final int maxTokens;
        final TokenSink sink;
        final AtomicBoolean cancelled = new AtomicBoolean();

        Job(int[] prompt, SamplingParams params, int maxTokens, TokenSink sink) {
            this.prompt = prompt;
            this.params = params;
            this.maxTokens = maxTokens;
            this.sink = sink;
        }

        @Override
        public void cancel() {
            cancelled.set(true);
        }
    }
}
