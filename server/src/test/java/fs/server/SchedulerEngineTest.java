package fs.server;

import fs.generate.TokenLogprobs;
import fs.generate.TokenSink;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.generate.GenerationStats;
import fs.generate.Generator;
import fs.generate.Scheduler;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SchedulerEngineTest {

    /** Collects what the engine says; {@code gate} (if any) holds the engine thread at the first token. */
    private static final class Recorder implements TokenSink {
        final List<Integer> tokens = new CopyOnWriteArrayList<>();
        final CompletableFuture<StopReason> done = new CompletableFuture<>();
        final CountDownLatch firstToken = new CountDownLatch(1);
        final CountDownLatch gate;
        volatile GenerationStats stats;

        Recorder(CountDownLatch gate) {
            this.gate = gate;
        }

        @Override
        public void onToken(int id, TokenLogprobs logprobs) {
            tokens.add(id);
            firstToken.countDown();
            if (gate != null) {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
        }

        @Override
        public void onDone(StopReason reason, GenerationStats stats) {
            this.stats = stats;
            done.complete(reason);
        }

        @Override
        public void onError(RuntimeException e) {
            done.completeExceptionally(e);
        }

        int[] ids() {
            return tokens.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    @Test
    void greedyAnswersEqualTheGeneratorsAndConsecutiveOnesReuseTheCache() throws Exception {
        try (TestServer fixture = TestServer.load(256)) {
            int[] first = fixture.chatPrompt("Why is the sky blue?", null);
            int[] second = fixture.chatPrompt("Why is the sea blue?", null);
            Generator.Generation expectedFirst = fixture.greedy(first, 12);
            Generator.Generation expectedSecond = fixture.greedy(second, 12);
            try (SchedulerEngine engine = fixture.schedulerEngine(1, 4)) {
                Recorder a = new Recorder(null);
                engine.submit(first, SamplingParams.greedy(), 12, -1, null, a);
                assertEquals(expectedFirst.stopReason(), a.done.get(60, TimeUnit.SECONDS));
                assertArrayEquals(expectedFirst.ids(), a.ids());

                Recorder b = new Recorder(null);
                engine.submit(second, new SamplingParams(0f, 20, 0.95f, 0f, 1f, 99L), 12, -1, null, b);
                assertEquals(expectedSecond.stopReason(), b.done.get(60, TimeUnit.SECONDS));
                assertArrayEquals(expectedSecond.ids(), b.ids(), "a greedy answer does not depend on the cache");
                int shared = 0;
                while (first[shared] == second[shared]) shared++;
                assertEquals(shared, b.stats.cachedTokens(), "the prefix both prompts share ran once");
            }
        }
    }

    @Test
    void aFullQueueRefusesAndCloseEndsRunningAndQueuedRequests() throws Exception {
        try (TestServer fixture = TestServer.load(256)) {
            int[] prompt = fixture.chatPrompt("Hi", null);
            SchedulerEngine engine = fixture.schedulerEngine(1, 1);
            CountDownLatch gate = new CountDownLatch(1);
            Recorder running = new Recorder(gate);
            engine.submit(prompt, SamplingParams.greedy(), 50, -1, null, running);
            assertTrue(running.firstToken.await(60, TimeUnit.SECONDS));
            Recorder queued = new Recorder(null);
            engine.submit(prompt, SamplingParams.greedy(), 5, -1, null, queued);
            assertEquals(new CompletionEngine.Load(1, 1, 1), engine.load());

            CompletionEngine.UnavailableException full = assertThrows(CompletionEngine.UnavailableException.class,
                    () -> engine.submit(prompt, SamplingParams.greedy(), 5, -1, null, new Recorder(null)));
            assertTrue(full.getMessage().contains("busy"), full.getMessage());

            Thread closer = Thread.ofPlatform().start(engine::close);
            Thread.sleep(100); // close() has begun: the running request stops before its next step
            gate.countDown();
            closer.join(30_000);
            assertEquals(StopReason.CANCELLED, running.done.get(1, TimeUnit.SECONDS));
            assertTrue(running.tokens.size() < 50, "cut short: " + running.tokens.size());
            assertEquals(StopReason.CANCELLED, queued.done.get(1, TimeUnit.SECONDS), "never ran");
            assertTrue(queued.tokens.isEmpty());
            assertThrows(CompletionEngine.UnavailableException.class,
                    () -> engine.submit(prompt, SamplingParams.greedy(), 5, -1, null, new Recorder(null)));
        }
    }

    @Test
    void aCancelledRequestStopsAtItsNextToken() throws Exception {
        try (TestServer fixture = TestServer.load(256)) {
            int[] prompt = fixture.chatPrompt("Hi", null);
            try (SchedulerEngine engine = fixture.schedulerEngine(1, 2)) {
                CountDownLatch gate = new CountDownLatch(1);
                Recorder recorder = new Recorder(gate);
                CompletionEngine.Handle handle =
                        engine.submit(prompt, SamplingParams.greedy(), 100, -1, null, recorder);
                assertTrue(recorder.firstToken.await(60, TimeUnit.SECONDS));
                handle.cancel();
                gate.countDown();
                assertEquals(StopReason.CANCELLED, recorder.done.get(30, TimeUnit.SECONDS));
                assertEquals(1, recorder.tokens.size(), "asked before each token: none came after the cancel");

                Recorder next = new Recorder(null);
                engine.submit(prompt, SamplingParams.greedy(), 3, -1, null, next);
                assertEquals(StopReason.TOKEN_LIMIT, next.done.get(30, TimeUnit.SECONDS), "the engine serves on");
            }
        }
    }

    @Test
    void aFailureFailsOnlyItsRequest() throws Exception {
        try (TestServer fixture = TestServer.load(256)) {
            int[] prompt = fixture.chatPrompt("Hi", null);
            boolean[] fail = {true};
            try (SchedulerEngine engine = SchedulerEngine.over(
                    new Scheduler(fixture.model.model(), new Scheduler.Config(1, 256, 64, 2)),
                    fixture.stopIds, () -> {
                if (fail[0]) throw new fs.FsException("the weights changed");
            })) {
                Recorder failed = new Recorder(null);
                engine.submit(prompt, SamplingParams.greedy(), 3, -1, null, failed);
                Exception e = assertThrows(Exception.class, () -> failed.done.get(60, TimeUnit.SECONDS));
                assertEquals("the weights changed", e.getCause().getMessage());
            }
        }
    }
}
