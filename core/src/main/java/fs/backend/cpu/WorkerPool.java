package fs.backend.cpu;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed set of persistent worker threads plus the calling thread, sharing the units of one task at a time.
 *
 * <p>Decode issues a couple of hundred small matvecs per token, so the hand-off must cost far less than a thread
 * wake-up: workers spin for a short while after each task (the next one usually arrives within microseconds), then
 * spin yielding the core to whoever else wants it, and only then park. Each thread is given a contiguous range of
 * the units, as llama.cpp gives each of its threads a contiguous part of a decode's rows: the weights it reads are
 * one ascending stream, not every other 64-row slice. A thread that has finished its range takes units from the
 * back of the others', so a thread that the OS has descheduled, or a worker still waking up, never holds the task
 * back: the caller waits only for units that were actually claimed. Nothing is allocated per task. Which thread runs
 * a unit never changes its result: callers make every unit's arithmetic independent of the others.
 */
final class WorkerPool implements AutoCloseable {

    /** The work of one op, split into units numbered from 0. */
    interface Task {
        /** Runs one unit; {@code worker} (0 is the calling thread) picks the scratch space the unit may use. */
        void run(int unit, int worker);
    }

    private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(500);
    /**
     * How long a waiting worker spins on the CPU alone before it spins by yielding: the next op of a forward usually
     * comes within this, and past it a core held by a spin is one the JIT's compiler threads (warming a small model
     * up takes seconds of compilation) or another process would use, while a yield with nobody waiting costs about a
     * microsecond. Measured on ../shared/trained Q8_0 at 2 threads on 2 busy cores (other processes running), mean
     * t/s of the first 3 of 15 bench runs, two rounds: pp128 297 with no yield, 408 yielding after 20 µs, 564 after
     * 0 µs; tg64 250, 270, 417.
     */
    private static final long HOT_SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    private static final int UNIT_BITS = 20;
    private static final long UNIT_MASK = (1L << UNIT_BITS) - 1;
    private static final int GENERATION_SHIFT = 2 * UNIT_BITS;
    private static final long GENERATION_MASK = (1L << (Long.SIZE - GENERATION_SHIFT)) - 1;
    /** Most units one task may have. */
    static final int MAX_UNITS = (int) UNIT_MASK;
    /**
     * Multiply-adds below which a task runs on the calling thread alone: handing units to a worker and waiting for
     * it to finish them costs more than the worker saves. Measured on ../shared/trained Q8_0 (K = 256), decode at 2
     * threads on 2 cores, medians of 3 tg512 runs: 1129 tok/s with every task split, 1210 below 2^16, 1540-1655
     * below 2^17 (the 256- and 128-row matmuls and attention under 256 positions alone, the 768-row ones split),
     * 1153 below 2^18, 1120 below 2^19.
     */
    static final long SERIAL_WORK = 1L << 17;
    /** Longs between two threads' claim words: a cache line each, so that claiming never contends for a line. */
    private static final int SLOT_STRIDE = 8;

    private final Worker[] workers;
    /**
     * Thread t's range of the current task in word t·SLOT_STRIDE: generation (high 24 bits), end of the range and
     * next unclaimed unit (20 bits each). The owner claims from the front, the others from the back, each claim a
     * compare-and-set on the whole word, so a thread holding a stale word can never take a unit of a later task.
     */
    private final AtomicLongArray claims;
    private final AtomicInteger completed = new AtomicInteger();
    private volatile boolean closed;
    /** Written before the claim words that publish it; read after reading one of them. */
    private Task task;
    private volatile Throwable failure;

    WorkerPool(int threads) {
        if (threads < 1) throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        workers = new Worker[threads - 1];
        claims = new AtomicLongArray(threads * SLOT_STRIDE);
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i + 1);
            workers[i].start();
        }
    }

    /** Number of threads that run units, the caller included: worker indices are 0 until this. */
    int threads() {
        return workers.length + 1;
    }

    /** Runs units 0 until {@code units} of a task whose every unit is worth a hand-off, on every thread. */
    void run(Task task, int units) {
        run(task, units, Long.MAX_VALUE);
    }

    /**
     * Runs units 0 until {@code units} of the task and returns when all are done: on every thread, or on the calling
     * thread alone where the task's {@code work} (its multiply-adds in all) is below {@link #SERIAL_WORK}. Either way
     * each unit computes the same floats, since a unit's arithmetic never depends on the thread that runs it.
     */
    void run(Task task, int units, long work) {
        if (closed) throw new IllegalStateException("the backend is closed");
        if (units < 0 || units > MAX_UNITS) throw new IllegalArgumentException("bad unit count " + units);
        if (workers.length == 0 || units <= 1 || work < SERIAL_WORK) {
            for (int u = 0; u < units; u++) task.run(u, 0);
            return;
        }
        this.task = task;
        completed.set(0);
        long generation = ((claims.get(0) >>> GENERATION_SHIFT) + 1) & GENERATION_MASK;
        int threads = threads();
        for (int t = 0; t < threads; t++) { // publishes task
            long from = (long) units * t / threads, to = (long) units * (t + 1) / threads;
            claims.set(t * SLOT_STRIDE, generation << GENERATION_SHIFT | to << UNIT_BITS | from);
        }
        for (Worker w : workers) if (w.parked) LockSupport.unpark(w);
        work(0, generation);
        for (int spins = 0; completed.get() != units; spins++) {
            if (spins < 1 << 12) Thread.onSpinWait();
            else Thread.yield();
        }
        this.task = null;
        Throwable thrown = failure;
        failure = null;
        if (thrown instanceof RuntimeException e) throw e;
        if (thrown instanceof Error e) throw e;
        if (thrown != null) throw new IllegalStateException(thrown);
    }

    /**
     * Runs units of task {@code generation}: the worker's own range from its front, then the other threads' from
     * their backs, until none is left or a later task has begun.
     */
    private void work(int worker, long generation) {
        Task t = task; // read after the claim word that published it
        int threads = threads();
        for (int i = 0; i < threads; i++) {
            int slot = (worker + i) % threads * SLOT_STRIDE;
            boolean own = i == 0;
            for (long c = claims.get(slot); c >>> GENERATION_SHIFT == generation; c = claims.get(slot)) {
                long next = c & UNIT_MASK, end = (c >>> UNIT_BITS) & UNIT_MASK;
                if (next >= end) break;
                if (claims.compareAndSet(slot, c, own ? c + 1 : c - (1L << UNIT_BITS))) {
                    try {
                        t.run((int) (own ? next : end - 1), worker);
                    } catch (Throwable e) {
                        failure = e;
                    } finally {
                        completed.incrementAndGet();
                    }
                }
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Worker w : workers) LockSupport.unpark(w);
        for (Worker w : workers) {
            try {
                w.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private final class Worker extends Thread {
        private final int index;
        volatile boolean parked;

        /** The generation of this worker's claim word: the task it was last given a range of. */
        private long generation() {
            return claims.get(index * SLOT_STRIDE) >>> GENERATION_SHIFT;
        }

        Worker(int index) {
            super("fs-cpu-worker-" + index);
            this.index = index;
            setDaemon(true);
            // An error that arrives after its unit (the JVM may deliver a fault in mapped memory late) reaches the
            // caller's next run like any other, instead of ending this thread with a stack trace on stderr.
            setUncaughtExceptionHandler((thread, e) -> failure = e);
        }

        @Override
        public void run() {
            long seen = generation();
            while (true) {
                long spinStart = System.nanoTime();
                int spins = 0;
                boolean hot = true;
                while (generation() == seen && !closed) {
                    if (hot) {
                        Thread.onSpinWait();
                        if ((++spins & 255) == 0) hot = System.nanoTime() - spinStart < HOT_SPIN_NANOS;
                        continue;
                    }
                    if (System.nanoTime() - spinStart < SPIN_NANOS) {
                        Thread.yield();
                        continue;
                    }
                    // Announce the park before the last look: the caller unparks after publishing, so either this
                    // look sees the new task or the caller sees the flag.
                    parked = true;
                    if (generation() == seen && !closed) LockSupport.park(this);
                    parked = false;
                }
                if (closed) return;
                seen = generation();
                work(index, seen);
            }
        }
    }
}
