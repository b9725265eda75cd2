package fs.generate;

import fs.FsException;
import fs.backend.KvCache;
import fs.backend.KvCacheTypes;
import fs.model.Batch;
import fs.model.DecoderModel;
import fs.model.ForwardBuffers;
import fs.model.Probe;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Generates for many requests at once on one loaded model, with continuous batching as llama-server does it: every
 * step is one forward holding the decode row of every active sequence plus up to {@link Config#prefillChunk} rows of
 * waiting prompts, so a long prompt is prefilled a chunk per step and never stalls the sequences that are decoding.
 * A sequence joins the decode rows when its prompt is done and leaves when it stops; its slot then takes the next
 * request waiting.
 *
 * <p>Each of {@link Config#slots} slots is a sequence of one shared KV cache, and remembers the tokens it holds: a new
 * request goes to the free slot whose tokens share the longest prefix with its prompt (the least recently used one on
 * a tie), and runs only the part after that prefix, as {@code fs chat} does across turns. Requests beyond the free
 * slots wait in a queue of at most {@link Config#queueLimit}; beyond that {@link #submit} throws
 * {@link QueueFullException}.
 *
 * <p>Threads: one thread of its own, started by the constructor and ended by {@link #close}, owns the model's backend
 * from then on and runs every forward, every sampling step and every {@link TokenSink} call. Nothing else may use that
 * backend while the scheduler is open. {@link #submit}, {@link Handle#cancel} and {@link #close} may be called from any
 * thread.
 *
 * <pre>{@code
 * try (Scheduler scheduler = new Scheduler(model, new Scheduler.Config(4, 4096, 512, 16))) {
 *     Scheduler.Handle handle = scheduler.submit(promptIds, params, 256, stopIds, sink); // may throw QueueFullException
 *     // … the scheduler thread calls sink.onToken(id, null) per token, then onDone or onError
 *     handle.cancel(); // e.g. when the client goes away
 * }
 * }</pre>
 */
public final class Scheduler implements AutoCloseable {

    /**
     * @param slots         sequences decoded together (each a KV cache slot)
     * @param contextLength positions of each slot: a prompt plus its new tokens must fit
     * @param prefillChunk  most prompt rows one step runs, beside the decode rows: bounds how long a step takes while
     *                      a long prompt is prefilled
     * @param queueLimit    requests that may wait for a slot (0: none)
     */
    public record Config(int slots, int contextLength, int prefillChunk, int queueLimit) {
        public Config {
            if (slots < 1) throw new FsException("the scheduler needs at least 1 slot, got " + slots);
            if (contextLength < 1) throw new FsException("the context length must be at least 1, got " + contextLength);
            if (prefillChunk < 1) throw new FsException("the prefill chunk must be at least 1 token, got " + prefillChunk);
            if (queueLimit < 0) throw new FsException("the queue limit must be ≥ 0, got " + queueLimit);
        }
    }

    /** A submitted request. */
    public interface Handle {
        /**
         * Asks the request to stop: a waiting one leaves the queue, a running one stops before its next step. Its
         * sink then gets {@code onDone(CANCELLED, …)} (what was generated so far stays delivered), unless it had
         * already ended. Any thread; returns at once.
         */
        void cancel();
    }

    private final DecoderModel model;
    private final Config config;
    private final KvCache cache;
    private final ForwardBuffers buffers;
    private final Thread thread;

    // Guarded by lock: what other threads hand to the scheduler thread.
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final ArrayDeque<Request> waiting = new ArrayDeque<>();
    private final List<Request> cancelledWaiting = new ArrayList<>();
    /** Work queued by {@link #runBetweenSteps}, run on the scheduler's thread before its next step. */
    private final List<Task> tasks = new ArrayList<>();
    private int freeSlots;
    private boolean closed;

    // Scheduler thread only.
    private final Slot[] slots;
    private final List<Request> active = new ArrayList<>(); // in the order they joined: prompts prefill in this order
    private final Batch.Builder batch;
    private final List<Request> inBatch = new ArrayList<>();
    private long uses;

    /** A scheduler whose cache holds float32 keys and values, the exact cache the tests compare. */
    public Scheduler(DecoderModel model, Config config) {
        this(model, config, KvCacheTypes.F32);
    }

    /**
     * Allocates the cache (its keys and values stored as {@code cacheTypes}) and buffers on the caller's thread (so
     * that a device too small says so here), then starts the scheduler's thread, which owns the model's backend until
     * {@link #close}.
     */
    public Scheduler(DecoderModel model, Config config, KvCacheTypes cacheTypes) {
        this.model = model;
        this.config = config;
        this.cache = model.allocateCache(config.slots(), config.contextLength(), cacheTypes);
        int batchRows = config.slots() + config.prefillChunk();
        this.buffers = model.allocateBuffers(batchRows, config.slots()); // one logits row per sequence at most
        this.batch = new Batch.Builder(batchRows);
        this.slots = new Slot[config.slots()];
        for (int i = 0; i < slots.length; i++) slots[i] = new Slot(i, config.contextLength());
        this.freeSlots = config.slots();
        this.thread = new Thread(this::run, "fs-scheduler");
        thread.setDaemon(true); // a scheduler left open does not keep the JVM alive
        thread.start();
    }

    public Config config() {
        return config;
    }

    /** What the slots' cache stores keys and values as. */
    public KvCacheTypes cacheTypes() {
        return cache.types();
    }

    /** Slots running a request or about to (any thread; a snapshot, for metrics). */
    public int busySlots() {
        lock.lock();
        try {
            return config.slots() - freeSlots + Math.min(waiting.size(), freeSlots);
        } finally {
            lock.unlock();
        }
    }

    /** Requests waiting for a slot (any thread; a snapshot, for metrics). */
    public int waiting() {
        lock.lock();
        try {
            return Math.max(0, waiting.size() - freeSlots);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues a request: generate up to {@code maxTokens} tokens after {@code prompt} (negative: until a stop token or
     * the end of the slot's context), ending at any of {@code stopIds}, choosing tokens with {@code params}; output
     * goes to {@code sink} on the scheduler's thread. Checks the request here, on the caller's thread: an empty prompt,
     * a token outside the vocabulary or a prompt (plus maxTokens) that does not fit the context throw an FsException;
     * a full queue throws {@link QueueFullException}; a closed scheduler IllegalStateException.
     */
    public Handle submit(int[] prompt, SamplingParams params, int maxTokens, int[] stopIds, TokenSink sink) {
        return submit(prompt, params, maxTokens, stopIds, -1, sink);
    }

    /**
     * As {@link #submit(int[], SamplingParams, int, int[], TokenSink)}, and each token reaches the sink with its
     * {@link TokenLogprobs} and the {@code topLogprobs} most likely alternatives at its position (0..
     * {@link TokenLogprobs#MAX_TOP}; -1: no logprobs, the sink gets null). Asking for them moves every sequence's
     * logits to the host, even a greedy one's.
     */
    public Handle submit(int[] prompt, SamplingParams params, int maxTokens, int[] stopIds, int topLogprobs,
                         TokenSink sink) {
        return submit(prompt, params, maxTokens, stopIds, topLogprobs, null, sink);
    }

    /**
     * As {@link #submit(int[], SamplingParams, int, int[], int, TokenSink)}, choosing only tokens that
     * {@code constraint} (null: none) allows; the constraint is this request's, touched on the scheduler's thread.
     */
    public Handle submit(int[] prompt, SamplingParams params, int maxTokens, int[] stopIds, int topLogprobs,
                         TokenConstraint constraint, TokenSink sink) {
        if (params == null || stopIds == null || sink == null) {
            throw new NullPointerException("params, stopIds and sink are required");
        }
        TokenLogprobs.checkTop(topLogprobs);
        RequestProgress.checkFits(prompt.length, maxTokens, config.contextLength(), "", "");
        int vocab = model.config().vocabSize();
        for (int id : prompt) {
            if (id < 0 || id >= vocab) {
                throw new FsException("token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
            }
        }
        Request request = new Request(prompt.clone(), params, maxTokens, stopIds.clone(), topLogprobs, constraint, sink);
        lock.lock();
        try {
            if (closed) throw new IllegalStateException("the scheduler is closed");
            if (waiting.size() >= freeSlots + config.queueLimit()) {
                throw new QueueFullException(config.slots(), config.queueLimit());
            }
            waiting.add(request);
            work.signal();
        } finally {
            lock.unlock();
        }
        return request;
    }

    /**
     * Runs {@code task} on the scheduler's thread between two steps, where it may run forwards of its own on the
     * model's backend (with its own cache and buffers, such as embeddings'); the answers being generated wait for it.
     * The future fails with what the task throws, or with IllegalStateException when the scheduler closes first.
     */
    public <T> CompletableFuture<T> runBetweenSteps(Supplier<T> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        lock.lock();
        try {
            if (closed) throw new IllegalStateException("the scheduler is closed");
            tasks.add(new Task(() -> {
                try {
                    result.complete(task.get());
                } catch (RuntimeException | Error e) {
                    result.completeExceptionally(e);
                }
            }, result::completeExceptionally));
            work.signal();
        } finally {
            lock.unlock();
        }
        return result;
    }

    /** A {@link #runBetweenSteps} task, and how to fail it when the scheduler closes before it runs. */
    private record Task(Runnable run, Consumer<Throwable> fail) {}

    /**
     * Stops the scheduler: running and waiting requests end with {@code onDone(CANCELLED, …)}, and its thread ends
     * (this waits for it, unless called from a sink, on that thread). Afterwards the backend is the caller's again.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            work.signal();
        } finally {
            lock.unlock();
        }
        if (Thread.currentThread() == thread) return;
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /**
     * The scheduler thread. A failure outside any one request's forward (a bug) must not leave submitters waiting
     * forever: the scheduler closes and every request it holds gets onError.
     */
    private void run() {
        try {
            loop();
        } catch (RuntimeException | Error e) {
            RuntimeException failure = new IllegalStateException("the scheduler stopped: " + e, e);
            List<Request> left;
            lock.lock();
            try {
                closed = true;
                left = new ArrayList<>(waiting);
                left.addAll(cancelledWaiting);
                waiting.clear();
                cancelledWaiting.clear();
                for (Task task : tasks) task.fail().accept(failure);
                tasks.clear();
            } finally {
                lock.unlock();
            }
            left.addAll(active);
            active.clear();
            for (Request r : left) r.fail(failure); // each sink hears of it; nothing else would
        }
    }

    /** Admit, step, repeat; at close, cancel whatever is left. */
    private void loop() {
        List<Request> admitted = new ArrayList<>();
        List<Request> dropped = new ArrayList<>();
        while (true) {
            admitted.clear();
            dropped.clear();
            boolean stopping;
            List<Task> toRun;
            lock.lock();
            try {
                while (!closed && active.isEmpty() && waiting.isEmpty() && cancelledWaiting.isEmpty()
                        && tasks.isEmpty()) {
                    work.awaitUninterruptibly();
                }
                stopping = closed;
                toRun = List.copyOf(tasks);
                tasks.clear();
                dropped.addAll(cancelledWaiting);
                cancelledWaiting.clear();
                if (stopping) {
                    dropped.addAll(waiting);
                    waiting.clear();
                } else {
                    while (freeSlots > 0 && !waiting.isEmpty()) {
                        admitted.add(waiting.poll());
                        freeSlots--;
                    }
                }
            } finally {
                lock.unlock();
            }
            for (Request r : dropped) r.finish(StopReason.CANCELLED, System.nanoTime());
            for (Task task : toRun) {
                if (stopping) task.fail().accept(new IllegalStateException("the scheduler is closed"));
                else task.run().run();
            }
            if (stopping) {
                for (Request r : List.copyOf(active)) end(r, StopReason.CANCELLED);
                return;
            }
            for (Request r : admitted) join(r);
            for (Request r : List.copyOf(active)) {
                if (r.cancelled) end(r, StopReason.CANCELLED);
            }
            if (!active.isEmpty()) step();
        }
    }

    /** Gives a request the free slot that holds the longest prefix of its prompt. */
    private void join(Request r) {
        Slot best = null;
        int bestPrefix = -1;
        for (Slot slot : slots) {
            if (slot.request != null) continue;
            int prefix = slot.tokens.commonPrefix(r.prompt);
            if (prefix > bestPrefix || (prefix == bestPrefix && slot.lastUse < best.lastUse)) {
                best = slot;
                bestPrefix = prefix;
            }
        }
        best.request = r;
        best.lastUse = ++uses;
        r.slot = best;
        r.progress.started(best.tokens.reuse(r.prompt), System.nanoTime());
        r.picker = new TokenPicker(r.params, r.topLogprobs);
        active.add(r);
    }

    /** One forward: every decoding sequence's next token, then prompt rows up to the chunk, in the order they joined. */
    private void step() {
        batch.clear();
        inBatch.clear();
        for (Request r : active) {
            if (!r.decoding) continue;
            r.logitIndex = batch.add(r.pending, r.slot.tokens.length(), r.slot.index, true);
            r.stepRows = 1;
            inBatch.add(r);
        }
        int budget = config.prefillChunk();
        for (Request r : active) {
            if (r.decoding || budget == 0) continue;
            int from = r.slot.tokens.length(), rows = Math.min(budget, r.prompt.length - from);
            boolean last = from + rows == r.prompt.length;
            for (int i = 0; i < rows; i++) {
                int index = batch.add(r.prompt[from + i], from + i, r.slot.index, last && i == rows - 1);
                if (index >= 0) r.logitIndex = index;
            }
            if (!last) r.logitIndex = -1;
            r.stepRows = rows;
            budget -= rows;
            inBatch.add(r);
        }
        try {
            model.forward(batch.build(), cache, buffers, Probe.NONE);
        } catch (RuntimeException e) {
            // What the failed forward wrote is unknown: the slots forget their tokens.
            for (Request r : inBatch) fail(r, e);
            return;
        }
        for (Request r : inBatch) {
            SlotTokens tokens = r.slot.tokens;
            if (r.decoding) {
                tokens.append(r.pending);
                r.progress.decoded();
            } else {
                tokens.append(r.prompt, tokens.length(), r.stepRows);
            }
        }
        for (Request r : inBatch) {
            if (r.logitIndex < 0) continue;
            if (!r.decoding) {
                r.decoding = true;
                StopReason empty = r.progress.prefilled(System.nanoTime());
                if (empty != null) {
                    end(r, empty);
                    continue;
                }
            }
            int next;
            try {
                // The request's own tokens start after its prompt: the additive penalties count only those.
                next = r.picker.pick(buffers, r.logitIndex, r.slot.tokens, r.prompt.length, model.config().vocabSize(),
                        r.constraint);
            } catch (RuntimeException e) {
                fail(r, e);
                continue;
            }
            accept(r, next);
        }
    }

    /** A chosen token: a stop ends the request, any other is delivered and, unless it was the last, decoded next. */
    private void accept(Request r, int next) {
        StopReason before = r.progress.endsBefore(next, r.cancelled);
        if (before != null) {
            end(r, before);
            return;
        }
        StopReason after = r.progress.delivered();
        try {
            r.sink.onToken(next, r.picker.lastLogprobs());
        } catch (RuntimeException e) {
            free(r);
            r.fail(e);
            return;
        }
        if (after != null) {
            end(r, after);
        } else {
            r.pending = next;
        }
    }

    private void end(Request r, StopReason reason) {
        free(r);
        r.finish(reason, System.nanoTime());
    }

    private void fail(Request r, RuntimeException e) {
        r.slot.tokens.clear();
        free(r);
        r.fail(e);
    }

    /** The request leaves its slot, which keeps its tokens for the next request's prefix. */
    private void free(Request r) {
        active.remove(r);
        r.slot.request = null;
        lock.lock();
        try {
            freeSlots++;
        } finally {
            lock.unlock();
        }
    }

    /** A sequence of the cache and the tokens it holds. Scheduler thread only. */
    private static final class Slot {
        final int index;
        final SlotTokens tokens;
        Request request;
        long lastUse;

        Slot(int index, int contextLength) {
            this.index = index;
            this.tokens = new SlotTokens(contextLength);
        }
    }

    /** One request; its fields but {@code cancelled} are the scheduler thread's once it is submitted. */
    private final class Request implements Handle {
        final int[] prompt;
        final SamplingParams params;
        final RequestProgress progress;
        final int topLogprobs;
        final TokenConstraint constraint; // null: none
        final TokenSink sink;
        volatile boolean cancelled;

        Slot slot;
        TokenPicker picker;
        boolean decoding; // the prompt is done; pending is the next token to run
        boolean ended;
        int pending;
        int logitIndex;
        int stepRows;

        Request(int[] prompt, SamplingParams params, int maxTokens, int[] stopIds, int topLogprobs,
                TokenConstraint constraint, TokenSink sink) {
            this.prompt = prompt;
            this.params = params;
            this.progress = new RequestProgress(prompt.length, maxTokens, config.contextLength(), stopIds);
            this.topLogprobs = topLogprobs;
            this.constraint = constraint;
            this.sink = sink;
        }

        @Override
        public void cancel() {
            cancelled = true;
            lock.lock();
            try {
                if (waiting.remove(this)) cancelledWaiting.add(this);
                work.signal();
            } finally {
                lock.unlock();
            }
        }

        void finish(StopReason reason, long now) {
            if (ended) return;
            ended = true;
            GenerationStats stats = progress.stats(slot == null ? 0 : slot.tokens.length(), now);
            try {
                sink.onDone(reason, stats);
            } catch (RuntimeException ignored) {
                // the request is over either way; a sink's failure must not stop the others
            }
        }

        void fail(RuntimeException e) {
            if (ended) return;
            ended = true;
            try {
                sink.onError(e);
            } catch (RuntimeException ignored) {
                // as in finish
            }
        }
    }
}
