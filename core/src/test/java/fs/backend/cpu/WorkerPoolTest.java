package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
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
