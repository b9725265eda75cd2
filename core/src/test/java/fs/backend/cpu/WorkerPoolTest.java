package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

class WorkerPoolTest {

    @Test
    void everyUnitOfEveryTaskRunsExactlyOnce() throws InterruptedException {
        for (int threads : new int[] {1, 2, 4}) {
            try (WorkerPool pool = new WorkerPool(threads)) {
                for (int round = 0; round < 3000; round++) {
                    int units = 1 + round % 37;
                    AtomicIntegerArray runs = new AtomicIntegerArray(units);
                    pool.run((unit, worker) -> runs.incrementAndGet(unit), units);
                    int[] expected = new int[units];
                    Arrays.fill(expected, 1);
                    int[] actual = new int[units];
                    for (int u = 0; u < units; u++) actual[u] = runs.get(u);
                    assertArrayEquals(expected, actual, threads + " threads, round " + round);
                    if (round % 1000 == 999) Thread.sleep(2); // let the workers park, then wake them
                }
            }
        }
    }

    @Test
    void workerIndicesStayBelowTheThreadCount() {
        try (WorkerPool pool = new WorkerPool(3)) {
            AtomicIntegerArray seen = new AtomicIntegerArray(3);
            for (int round = 0; round < 200; round++) pool.run((unit, worker) -> seen.incrementAndGet(worker), 50);
            int total = 0;
            for (int w = 0; w < 3; w++) total += seen.get(w);
            assertEquals(200 * 50, total);
        }
    }

    @Test
    void aTaskOfLittleWorkRunsEveryUnitOnTheCallingThread() {
        try (WorkerPool pool = new WorkerPool(3)) {
            AtomicIntegerArray runs = new AtomicIntegerArray(50);
            Thread caller = Thread.currentThread();
            pool.run((unit, worker) -> {
                assertEquals(0, worker);
                assertSame(caller, Thread.currentThread());
                runs.incrementAndGet(unit);
            }, 50, WorkerPool.SERIAL_WORK - 1);
            for (int u = 0; u < 50; u++) assertEquals(1, runs.get(u), "unit " + u);
        }
    }

    @Test
    void aTaskOfEnoughWorkIsShared() {
        try (WorkerPool pool = new WorkerPool(2)) {
            AtomicIntegerArray seen = new AtomicIntegerArray(2);
            // Units slow enough that the worker, spinning for the next task, claims some before the caller is done.
            for (int round = 0; round < 20 && seen.get(1) == 0; round++) {
                pool.run((unit, worker) -> {
                    seen.incrementAndGet(worker);
                    LockSupport.parkNanos(100_000);
                }, 16, WorkerPool.SERIAL_WORK);
            }
            assertTrue(seen.get(1) > 0, "the worker ran no unit");
        }
    }

    /**
     * Each thread begins at the front of a contiguous range of its own (two threads, 16 units: the caller 0..7, the
     * worker 8..15) and goes up it; what it takes of another's range comes from that range's back.
     */
    @Test
    void eachThreadGoesUpARangeOfItsOwn() {
        try (WorkerPool pool = new WorkerPool(2)) {
            for (int round = 0; round < 20; round++) {
                List<List<Integer>> order = List.of(new ArrayList<>(), new ArrayList<>());
                pool.run((unit, worker) -> {
                    synchronized (order) {
                        order.get(worker).add(unit);
                    }
                    LockSupport.parkNanos(50_000);
                }, 16, WorkerPool.SERIAL_WORK);
                List<Integer> caller = order.get(0), worker = order.get(1);
                assertEquals(16, caller.size() + worker.size());
                assertRange(caller, 0, 8);
                if (!worker.isEmpty()) assertRange(worker, 8, 16);
            }
        }
    }

    /**
     * The units a thread ran, in order: from, from + 1, … (its own range [from, to), up to where it ran out), then
     * descending (each taken from the back of another's range); none twice.
     */
    private static void assertRange(List<Integer> units, int from, int to) {
        assertEquals(from, units.getFirst(), units.toString());
        int i = 0;
        while (i < units.size() && units.get(i) == from + i && from + i < to) i++;
        for (int j = i + 1; j < units.size(); j++) {
            assertTrue(units.get(j) < units.get(j - 1), "taken from another's back: " + units);
        }
        assertEquals(units.size(), units.stream().distinct().count(), units.toString());
    }

    /**
     * A worker held up in a unit of its range does not hold the rest of that range: the caller takes it, and the run
     * ends when the held unit does.
     */
    @Test
    void theCallerTakesTheRangeOfAWorkerThatIsHeldUp() throws InterruptedException {
        try (WorkerPool pool = new WorkerPool(2)) {
            for (int round = 0; round < 20; round++) {
                CountDownLatch othersDone = new CountDownLatch(1);
                AtomicInteger byCaller = new AtomicInteger(), byWorker = new AtomicInteger();
                AtomicInteger heldUntilTheRest = new AtomicInteger();
                pool.run((unit, worker) -> {
                    if (worker == 0) {
                        if (byCaller.incrementAndGet() == 15) othersDone.countDown();
                        LockSupport.parkNanos(20_000);
                        return;
                    }
                    // The worker's first unit waits until the caller has run every other one.
                    if (byWorker.incrementAndGet() == 1) {
                        try {
                            if (othersDone.await(10, TimeUnit.SECONDS)) heldUntilTheRest.incrementAndGet();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }, 16, WorkerPool.SERIAL_WORK);
                if (byWorker.get() > 0) {
                    assertEquals(1, byWorker.get(), "round " + round);
                    assertEquals(15, byCaller.get(), "round " + round);
                    assertEquals(1, heldUntilTheRest.get(), "round " + round);
                } else {
                    assertEquals(16, byCaller.get(), "round " + round);
                }
            }
        }
    }

    @Test
    void aFailingUnitFailsTheRunAndThePoolStaysUsable() {
        try (WorkerPool pool = new WorkerPool(2)) {
            IllegalStateException boom = new IllegalStateException("unit 7");
            IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> pool.run((unit, worker) -> {
                if (unit == 7) throw boom;
            }, 20));
            assertSame(boom, thrown);
            AtomicIntegerArray runs = new AtomicIntegerArray(5);
            pool.run((unit, worker) -> runs.incrementAndGet(unit), 5);
            for (int u = 0; u < 5; u++) assertEquals(1, runs.get(u));
        }
    }

    @Test
    void aClosedPoolRefusesWork() {
        WorkerPool pool = new WorkerPool(2);
        pool.close();
        assertThrows(IllegalStateException.class, () -> pool.run((unit, worker) -> {}, 4));
    }
}
