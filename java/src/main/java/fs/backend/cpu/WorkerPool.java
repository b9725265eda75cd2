package fs.backend.cpu;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed set of persistent worker threads plus the calling thread, sharing the units of one task at a time.
 *
 * <p>Decode issues a couple of hundred small matvecs per token, so the hand-off must cost far less than a thread
 * wake-up: workers spin for a short while after each task (the next one usually arrives within microseconds) and
 * only then park. Units are taken from a shared counter, so a core stolen by another process slows the task down
 * instead of stalling it. Nothing is allocated per task. Which thread runs a unit never changes its result: callers
 * make every unit's arithmetic independent of the others.
 */
final class WorkerPool implements AutoCloseable {

    /** The work of one op, split into units numbered from 0. */
    interface Task {
        /** Runs one unit; {@code worker} (0 is the calling thread) picks the scratch space the unit may use. */
        void run(int unit, int worker);
    }

    private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

    private final Worker[] workers;
    private final AtomicInteger nextUnit = new AtomicInteger();
    private final AtomicInteger busyWorkers = new AtomicInteger();
    private volatile long generation;
    private volatile boolean closed;
    private Task task;
    private int units;
    private volatile Throwable failure;

    WorkerPool(int threads) {
        if (threads < 1) throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        workers = new Worker[threads - 1];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i + 1);
            workers[i].start();
        }
    }

    /** Number of threads that run units, the caller included: worker indices are 0 until this. */
    int threads() {
        return workers.length + 1;
    }

    /** Runs units 0 until {@code unitCount} of the task on every thread and returns when all are done. */
    void run(Task task, int unitCount) {
        if (closed) throw new IllegalStateException("the backend is closed");
        if (workers.length == 0 || unitCount <= 1) {
            for (int u = 0; u < unitCount; u++) task.run(u, 0);
            return;
        }
        this.task = task;
        this.units = unitCount;
        nextUnit.set(0);
        busyWorkers.set(workers.length);
        generation = generation + 1; // publishes task and units to the workers
        for (Worker w : workers) if (w.parked) LockSupport.unpark(w);
        Throwable callerFailure = null;
        try {
            work(0);
        } catch (Throwable t) {
            callerFailure = t;
        }
        // Every worker must check in before the next task may reset the shared counter.
        for (int spins = 0; busyWorkers.get() != 0; spins++) {
            if (spins < 1 << 16) Thread.onSpinWait();
            else Thread.yield();
        }
        this.task = null;
        Throwable workerFailure = failure;
        failure = null;
        Throwable thrown = callerFailure != null ? callerFailure : workerFailure;
        if (thrown instanceof RuntimeException e) throw e;
        if (thrown instanceof Error e) throw e;
        if (thrown != null) throw new IllegalStateException(thrown);
    }

    private void work(int worker) {
        Task t = task;
        int n = units;
        for (int u = nextUnit.getAndIncrement(); u < n; u = nextUnit.getAndIncrement()) t.run(u, worker);
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

        Worker(int index) {
            super("fs-cpu-worker-" + index);
            this.index = index;
            setDaemon(true);
        }

        @Override
        public void run() {
            long seen = generation;
            while (true) {
                long spinStart = System.nanoTime();
                int spins = 0;
                while (generation == seen && !closed) {
                    if ((++spins & 255) != 0 || System.nanoTime() - spinStart < SPIN_NANOS) {
                        Thread.onSpinWait();
                        continue;
                    }
                    // Announce the park before the last look: the caller unparks after publishing, so either this
                    // look sees the new generation or the caller sees the flag.
                    parked = true;
                    if (generation == seen && !closed) LockSupport.park(this);
                    parked = false;
                }
                if (closed) return;
                seen = generation;
                try {
                    work(index);
                } catch (Throwable t) {
                    failure = t;
                }
                busyWorkers.decrementAndGet();
            }
        }
    }
}
