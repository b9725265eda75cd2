package fs.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.Buffer;
import fs.backend.ForwardingBackend;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.Weight;
import fs.backend.cpu.VectorBackend;
import fs.model.Golden;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.model.TestModel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Continuous batching on tiny-untied: concurrent greedy requests get exactly the tokens each gets alone through the
 * {@link Generator}, whatever joins and leaves around them; cancellation, the queue limit, prefix reuse, and several
 * submitting threads.
 */
class SchedulerTest {
    private static final int[] NO_STOP = {};
    private static final int CONTEXT = 64;
    private static final long TIMEOUT_SECONDS = 60;

    private static Golden golden;
    private static TestModel test;

    @BeforeAll
    static void open() throws IOException {
        golden = Golden.load("tiny-untied");
        test = TestModel.open(Golden.modelDir("tiny-untied"), new VectorBackend(2), CONTEXT, 16, 1);
    }

    @AfterAll
    static void close() {
        test.close();
    }

    /** Prompt {@code i}: a slice of the golden prompt, of a length that differs from its neighbours'. */
    private static int[] prompt(int i) {
        int[] ids = golden.promptIds();
        int length = 2 + (i * 7) % 13;
        int start = (i * 5) % (ids.length - length);
        return Arrays.copyOfRange(ids, start, start + length);
    }

    /** What the generator alone produces, on the shared model's own single sequence (the scheduler is closed). */
    private static int[] alone(int[] prompt, int maxTokens) {
        Generator generator = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy());
        return generator.generate(prompt, maxTokens, id -> {}).ids();
    }

    /**
     * The same at each cache type a head of 20 can be (q8_0 needs whole blocks of 32): batched decoding over an f16
     * or bf16 cache gives each request the tokens it gets alone over a cache of that type.
     */
    @Test
    void concurrentRequestsGetTheTokensEachGetsAloneAtEveryCacheType() throws Exception {
        for (KvCacheType type : new KvCacheType[] {KvCacheType.F16, KvCacheType.BF16}) {
            KvCacheTypes types = new KvCacheTypes(type, type);
            int n = 5, maxTokens = 6;
            RecordingSink[] recorders = new RecordingSink[n];
            try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(3, CONTEXT, 5, 8), types)) {
                for (int i = 0; i < n; i++) {
                    recorders[i] = new RecordingSink();
                    scheduler.submit(prompt(i), SamplingParams.greedy(), maxTokens, NO_STOP, recorders[i]);
                }
                for (RecordingSink r : recorders) assertEquals(StopReason.TOKEN_LIMIT, r.await());
            }
            SingleSequence sequence = new SingleSequence(test.model(),
                    SingleSequence.Shape.forGeneration(CONTEXT, 16), types);
            for (int i = 0; i < n; i++) {
                int[] alone = new Generator(sequence, NO_STOP, SamplingParams.greedy())
                        .generate(prompt(i), maxTokens, id -> {}).ids();
                assertArrayEquals(alone, recorders[i].ids(), type + ", request " + i);
            }
        }
    }

    @Test
    void concurrentRequestsGetTheTokensEachGetsAlone() throws Exception {
        int n = 6, maxTokens = 7;
        RecordingSink[] recorders = new RecordingSink[n];
        // 4 slots for 6 requests: two wait and join as others leave; a prefill chunk of 5 splits the longer prompts
        // over steps that also decode.
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(4, CONTEXT, 5, 8))) {
            for (int i = 0; i < n; i++) {
                recorders[i] = new RecordingSink();
                scheduler.submit(prompt(i), SamplingParams.greedy(), maxTokens - (i % 3), NO_STOP, recorders[i]);
            }
            for (RecordingSink r : recorders) assertEquals(StopReason.TOKEN_LIMIT, r.await());
        }
        for (int i = 0; i < n; i++) {
            assertArrayEquals(alone(prompt(i), maxTokens - (i % 3)), recorders[i].ids(), "request " + i);
            assertEquals("fs-scheduler", recorders[i].thread.getName());
            assertEquals(maxTokens - (i % 3), recorders[i].stats.generatedTokens());
            assertEquals(maxTokens - (i % 3) - 1, recorders[i].stats.decodeSteps());
            assertTrue(!recorders[i].calledAfterEnd);
        }
    }

    /**
     * The logits a single sequence computes for the last of {@code tokens}, run whole in one forward from position 0
     * (the scheduler must be closed: its thread owns the backend while open).
     */
    private static float[] oneSequenceLogits(int[] tokens) {
        SingleSequence sequence =
                new SingleSequence(test.model(), SingleSequence.Shape.forGeneration(CONTEXT, CONTEXT));
        sequence.forward(tokens, 0, Probe.NONE);
        float[] logits = new float[test.model().config().vocabSize()];
        sequence.readLogits(sequence.logitRows() - 1, logits);
        return logits;
    }

    private static int[] concat(int[] a, int[] b, int bLength) {
        int[] out = Arrays.copyOf(a, a.length + bLength);
        System.arraycopy(b, 0, out, a.length, bLength);
        return out;
    }

    /** Checks each delivered token's logprobs against a double log-softmax of a one-sequence forward's logits. */
    private static void assertLogprobsOfOneSequence(int[] prompt, RecordingSink recorder, int top) {
        int[] ids = recorder.ids();
        for (int i = 0; i < ids.length; i++) {
            float[] logits = oneSequenceLogits(concat(prompt, ids, i));
            double max = Double.NEGATIVE_INFINITY;
            for (float logit : logits) max = Math.max(max, logit);
            double sum = 0;
            for (float logit : logits) sum += Math.exp(logit - max);
            double logNormalizer = max + Math.log(sum);
            TokenLogprobs got = recorder.logprobs.get(i);
            assertEquals(ids[i], got.token(), "token " + i);
            assertEquals(logits[ids[i]] - logNormalizer, got.logprob(), 1e-3, "token " + i);
            assertEquals(top, got.topTokens().length);
            // Greedy: the chosen token is the most likely one, first in the list.
            if (top > 0) {
                assertEquals(ids[i], got.topTokens()[0], "token " + i);
                assertEquals(got.logprob(), got.topLogprobs()[0]);
            }
            for (int k = 0; k < top; k++) {
                assertEquals(logits[got.topTokens()[k]] - logNormalizer, got.topLogprobs()[k], 1e-3, "top " + k);
            }
        }
    }

    @Test
    void aGreedyRequestWithLogprobsGetsTheLogSoftmaxOfItsOwnLogitsAloneAndInABatch() throws Exception {
        int maxTokens = 5;
        RecordingSink alone = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(3, CONTEXT, 5, 4))) {
            scheduler.submit(prompt(3), SamplingParams.greedy(), maxTokens, NO_STOP, 4, alone);
            assertEquals(StopReason.TOKEN_LIMIT, alone.await());
        }
        RecordingSink[] batched = new RecordingSink[3];
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(3, CONTEXT, 5, 4))) {
            for (int i = 0; i < 3; i++) {
                batched[i] = new RecordingSink();
                int top = i == 1 ? -1 : i * 5; // one neighbour asks for none: it gets null
                scheduler.submit(prompt(3 + i), SamplingParams.greedy(), maxTokens, NO_STOP, top, batched[i]);
            }
            for (RecordingSink r : batched) assertEquals(StopReason.TOKEN_LIMIT, r.await());
        }
        assertArrayEquals(alone(prompt(3), maxTokens), alone.ids(), "asking for logprobs does not change the tokens");
        assertLogprobsOfOneSequence(prompt(3), alone, 4);
        assertLogprobsOfOneSequence(prompt(3), batched[0], 0);
        assertLogprobsOfOneSequence(prompt(5), batched[2], 10);
        assertTrue(batched[1].logprobs.stream().allMatch(java.util.Objects::isNull));
        assertArrayEquals(alone(prompt(4), maxTokens), batched[1].ids());
        assertThrows(FsException.class, () -> {
            try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, CONTEXT, 5, 0))) {
                scheduler.submit(prompt(3), SamplingParams.greedy(), 1, NO_STOP, 21, new RecordingSink());
            }
        });
    }

    @Test
    void aTaskRunsOnTheSchedulersThreadBetweenStepsAndFailsOnceItIsClosed() throws Exception {
        RecordingSink answer = new RecordingSink();
        Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, CONTEXT, 5, 0));
        Thread[] schedulerThread = new Thread[1];
        scheduler.submit(prompt(3), SamplingParams.greedy(), 20, NO_STOP, new TokenSink() {
            @Override
            public void onToken(int id, TokenLogprobs logprobs) {
                schedulerThread[0] = Thread.currentThread();
                answer.onToken(id, logprobs);
            }

            @Override
            public void onDone(StopReason reason, GenerationStats stats) {
                answer.onDone(reason, stats);
            }

            @Override
            public void onError(RuntimeException error) {
                answer.onError(error);
            }
        });
        Thread ranOn = scheduler.runBetweenSteps(Thread::currentThread).get();
        assertEquals(StopReason.TOKEN_LIMIT, answer.await());
        assertEquals(schedulerThread[0], ranOn, "the thread that owns the backend");
        assertArrayEquals(alone(prompt(3), 20), answer.ids(), "the answer is the same with a task between its steps");
        IllegalArgumentException thrown = new IllegalArgumentException("the task's own failure");
        var failing = scheduler.runBetweenSteps(() -> {
            throw thrown;
        });
        assertSame(thrown, assertThrows(ExecutionException.class, failing::get).getCause());
        scheduler.close();
        assertThrows(IllegalStateException.class, () -> scheduler.runBetweenSteps(() -> 1));
    }

    /**
     * The tokens {@code params} (seeded) choose after {@code prompt}: each step's logits from a one-sequence forward,
     * penalised by the reference, then drawn by a sampler of the same seed with the penalties off.
     */
    private static int[] referencePenalizedAnswer(int[] prompt, SamplingParams params, int maxTokens) {
        Sampler unpenalized = new Sampler(new SamplingParams(params.temperature(), params.topK(), params.topP(),
                params.minP(), 1f, 0f, 0f, params.seed()));
        int[] tokens = prompt;
        for (int i = 0; i < maxTokens; i++) {
            float[] penalized = SamplerTest.referencePenalized(oneSequenceLogits(tokens), tokens, tokens.length,
                    prompt.length, params);
            tokens = concat(tokens, new int[] {unpenalized.sample(penalized)}, 1);
        }
        return Arrays.copyOfRange(tokens, prompt.length, tokens.length);
    }

    @Test
    void penalisedRequestsCountOnlyTheirOwnTokensInTheSchedulerAndTheGenerator() throws Exception {
        int maxTokens = 16;
        // The prompt repeats its tokens, so that a penalty counting it would differ.
        int[] prompt = concat(prompt(6), prompt(6), prompt(6).length);
        SamplingParams greedy = new SamplingParams(0f, 0, 1f, 0f, 1.2f, 0.8f, 2f, 0L);
        // These models' top logits are ~10 apart and more: penalties of at most 2 rarely move a greedy choice, but
        // at a high temperature they shift every draw.
        SamplingParams sampled = new SamplingParams(40f, 0, 1f, 0f, 1f, 1.5f, 2f, 5L);
        SamplingParams sampledPlain = new SamplingParams(40f, 0, 1f, 0f, 1f, 0f, 0f, 5L);
        RecordingSink a = new RecordingSink(), b = new RecordingSink(), plain = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(3, CONTEXT, 5, 0))) {
            scheduler.submit(prompt, greedy, maxTokens, NO_STOP, a);
            scheduler.submit(prompt, sampled, maxTokens, NO_STOP, 2, b);
            scheduler.submit(prompt, sampledPlain, maxTokens, NO_STOP, plain);
            for (RecordingSink r : List.of(a, b, plain)) assertEquals(StopReason.TOKEN_LIMIT, r.await());
        }
        int[] expectedGreedy = referencePenalizedAnswer(prompt, greedy, maxTokens);
        int[] expectedSampled = referencePenalizedAnswer(prompt, sampled, maxTokens);
        assertArrayEquals(expectedGreedy, a.ids());
        assertArrayEquals(expectedSampled, b.ids());
        assertTrue(!Arrays.equals(plain.ids(), b.ids()), "the penalties changed the draws");
        for (var params : List.of(greedy, sampled)) {
            Generator generator = new Generator(test.sequence(), NO_STOP, params);
            int[] generated = generator.generate(prompt, maxTokens, id -> {}).ids();
            assertArrayEquals(params == greedy ? expectedGreedy : expectedSampled, generated,
                    "the one-sequence path applies the same penalties");
        }
    }

    @Test
    void aSequenceJoinsWhileAnotherDecodesAndLeavesFirst() throws Exception {
        RecordingSink longer = new RecordingSink(), shorter = new RecordingSink();
        CountDownLatch decoding = new CountDownLatch(3);
        TokenSink watched = new TokenSink() {
            @Override public void onToken(int id, TokenLogprobs logprobs) {
                longer.onToken(id, logprobs);
                decoding.countDown();
            }
            @Override public void onDone(StopReason reason, GenerationStats stats) { longer.onDone(reason, stats); }
            @Override public void onError(RuntimeException e) { longer.onError(e); }
        };
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(2, CONTEXT, 16, 0))) {
            scheduler.submit(prompt(1), SamplingParams.greedy(), 20, NO_STOP, watched);
            assertTrue(decoding.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
            scheduler.submit(prompt(2), SamplingParams.greedy(), 3, NO_STOP, shorter);
            assertEquals(StopReason.TOKEN_LIMIT, shorter.await());
            assertTrue(!longer.done.isDone() || longer.ids().length == 20, "the shorter one joined and left first");
            assertEquals(StopReason.TOKEN_LIMIT, longer.await());
        }
        assertArrayEquals(alone(prompt(1), 20), longer.ids());
        assertArrayEquals(alone(prompt(2), 3), shorter.ids());
    }

    @Test
    void stopTokensEndARequestWithoutBeingDelivered() throws Exception {
        int[] expected = alone(prompt(3), 10);
        int stop = expected[4];
        int first = 0;
        while (expected[first] != stop) first++;
        RecordingSink r = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, CONTEXT, 16, 0))) {
            scheduler.submit(prompt(3), SamplingParams.greedy(), 10, new int[] {stop}, r);
            assertEquals(StopReason.END_OF_SEQUENCE, r.await());
        }
        assertArrayEquals(Arrays.copyOf(expected, first), r.ids());
    }

    /** Allows the tokens of a set only; remembers what it was told to accept. */
    private static final class AllowedSet implements TokenConstraint {
        final Set<Integer> allowed;
        final List<Integer> accepted = new ArrayList<>();

        AllowedSet(Set<Integer> allowed) {
            this.allowed = allowed;
        }

        @Override public boolean allows(int token) { return allowed.contains(token); }
        @Override public void mask(float[] logits) {
            for (int i = 0; i < logits.length; i++) if (!allowed.contains(i)) logits[i] = Float.NEGATIVE_INFINITY;
        }
        @Override public void accept(int token) { accepted.add(token); }
    }

    @Test
    void aConstraintThatAllowsTheGreedyTokensChangesNothingAndOneThatForbidsThemIsObeyed() throws Exception {
        int maxTokens = 6;
        int[] expected = alone(prompt(2), maxTokens);
        Set<Integer> greedyTokens = new HashSet<>();
        for (int id : expected) greedyTokens.add(id);
        AllowedSet agreeing = new AllowedSet(greedyTokens);
        // Forbidding the greedy first token and allowing a handful of others must pick among those only.
        Set<Integer> others = new HashSet<>(List.of(11, 220, 1000, 4096));
        others.removeAll(greedyTokens);
        AllowedSet forbidding = new AllowedSet(others);
        RecordingSink a = new RecordingSink(), b = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(2, CONTEXT, 16, 0))) {
            scheduler.submit(prompt(2), SamplingParams.greedy(), maxTokens, NO_STOP, -1, agreeing, a);
            scheduler.submit(prompt(2), SamplingParams.greedy(), maxTokens, NO_STOP, -1, forbidding, b);
            assertEquals(StopReason.TOKEN_LIMIT, a.await());
            assertEquals(StopReason.TOKEN_LIMIT, b.await());
        }
        assertArrayEquals(expected, a.ids());
        assertEquals(List.of(Arrays.stream(expected).boxed().toArray(Integer[]::new)), agreeing.accepted);
        assertEquals(maxTokens, b.ids().length);
        for (int id : b.ids()) assertTrue(others.contains(id), "token " + id + " is not allowed");
        assertEquals(List.of(Arrays.stream(b.ids()).boxed().toArray(Integer[]::new)), forbidding.accepted);
    }

    @Test
    void withoutALimitARequestStopsWhenItsSlotIsFull() throws Exception {
        int[] prompt = prompt(4);
        RecordingSink r = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, prompt.length + 5, 16, 0))) {
            scheduler.submit(prompt, SamplingParams.greedy(), -1, NO_STOP, r);
            assertEquals(StopReason.CONTEXT_FULL, r.await());
        }
        assertEquals(5, r.ids().length);
    }

    @Test
    void cancellingStopsARunningRequestAndDropsAWaitingOne() throws Exception {
        CountDownLatch firstToken = new CountDownLatch(1), release = new CountDownLatch(1);
        RecordingSink running = new RecordingSink(), queued = new RecordingSink(), after = new RecordingSink();
        TokenSink holding = new TokenSink() { // holds the scheduler thread after the first token
            @Override public void onToken(int id, TokenLogprobs logprobs) {
                running.onToken(id, logprobs);
                firstToken.countDown();
                await(release);
            }
            @Override public void onDone(StopReason reason, GenerationStats stats) { running.onDone(reason, stats); }
            @Override public void onError(RuntimeException e) { running.onError(e); }
        };
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, CONTEXT, 16, 1))) {
            Scheduler.Handle first = scheduler.submit(prompt(5), SamplingParams.greedy(), 30, NO_STOP, holding);
            assertTrue(firstToken.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
            Scheduler.Handle second = scheduler.submit(prompt(6), SamplingParams.greedy(), 30, NO_STOP, queued);
            second.cancel();
            first.cancel();
            release.countDown();
            assertEquals(StopReason.CANCELLED, queued.await());
            assertEquals(0, queued.ids().length);
            assertEquals(StopReason.CANCELLED, running.await());
            assertTrue(running.ids().length < 30, running.ids().length + " tokens");
            first.cancel(); // after the end: nothing happens
            // The slot is free again, and reuses what the cancelled request left in it.
            scheduler.submit(prompt(5), SamplingParams.greedy(), 4, NO_STOP, after);
            assertEquals(StopReason.TOKEN_LIMIT, after.await());
            assertEquals(prompt(5).length - 1, after.stats.cachedTokens());
        }
        assertArrayEquals(alone(prompt(5), 4), after.ids());
        assertTrue(!running.calledAfterEnd && !queued.calledAfterEnd);
    }

    @Test
    void beyondTheQueueLimitSubmitThrows() throws Exception {
        CountDownLatch firstToken = new CountDownLatch(1), release = new CountDownLatch(1);
        RecordingSink running = new RecordingSink();
        TokenSink holding = new TokenSink() {
            @Override public void onToken(int id, TokenLogprobs logprobs) {
                running.onToken(id, logprobs);
                firstToken.countDown();
                await(release);
            }
            @Override public void onDone(StopReason reason, GenerationStats stats) { running.onDone(reason, stats); }
            @Override public void onError(RuntimeException e) { running.onError(e); }
        };
        RecordingSink[] queued = {new RecordingSink(), new RecordingSink()};
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, CONTEXT, 16, 2))) {
            scheduler.submit(prompt(0), SamplingParams.greedy(), 3, NO_STOP, holding);
            assertTrue(firstToken.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
            for (RecordingSink r : queued) scheduler.submit(prompt(1), SamplingParams.greedy(), 2, NO_STOP, r);
            assertEquals(1, scheduler.busySlots());
            assertEquals(2, scheduler.waiting());
            QueueFullException full = assertThrows(QueueFullException.class,
                    () -> scheduler.submit(prompt(2), SamplingParams.greedy(), 2, NO_STOP, new RecordingSink()));
            assertEquals("the scheduler is full: 1 slot busy and 2 requests waiting; try again later", full.getMessage());
            release.countDown();
            for (RecordingSink r : queued) assertEquals(StopReason.TOKEN_LIMIT, r.await());
            assertEquals(StopReason.TOKEN_LIMIT, running.await());
            assertEquals(0, scheduler.busySlots());
            assertEquals(0, scheduler.waiting());
            // Room again once they are done.
            RecordingSink later = new RecordingSink();
            scheduler.submit(prompt(2), SamplingParams.greedy(), 2, NO_STOP, later);
            assertEquals(StopReason.TOKEN_LIMIT, later.await());
        }
    }

    @Test
    void badRequestsAreRefusedOnTheCallersThread() {
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, 16, 16, 0))) {
            RecordingSink r = new RecordingSink();
            assertEquals("the prompt is empty: there is nothing to generate from", assertThrows(FsException.class,
                    () -> scheduler.submit(new int[0], SamplingParams.greedy(), 1, NO_STOP, r)).getMessage());
            assertEquals("10 prompt tokens + 7 new tokens do not fit the context of 16 tokens", assertThrows(
                    FsException.class, () -> scheduler.submit(new int[10], SamplingParams.greedy(), 7, NO_STOP, r))
                    .getMessage());
            int vocab = test.model().config().vocabSize();
            assertTrue(assertThrows(FsException.class, () -> scheduler.submit(new int[] {vocab}, SamplingParams.greedy(),
                    1, NO_STOP, r)).getMessage().startsWith("token id " + vocab + " is outside the vocabulary"));
            assertTrue(!r.done.isDone());
            scheduler.close();
            assertThrows(IllegalStateException.class,
                    () -> scheduler.submit(new int[] {1}, SamplingParams.greedy(), 1, NO_STOP, r));
        }
    }

    @Test
    void closingCancelsWhatIsLeft() throws Exception {
        CountDownLatch firstToken = new CountDownLatch(1);
        RecordingSink running = new RecordingSink(), queued = new RecordingSink();
        TokenSink signalling = new TokenSink() {
            @Override public void onToken(int id, TokenLogprobs logprobs) {
                running.onToken(id, logprobs);
                firstToken.countDown();
            }
            @Override public void onDone(StopReason reason, GenerationStats stats) { running.onDone(reason, stats); }
            @Override public void onError(RuntimeException e) { running.onError(e); }
        };
        Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(1, CONTEXT, 16, 1));
        scheduler.submit(prompt(0), SamplingParams.greedy(), 50, NO_STOP, signalling);
        scheduler.submit(prompt(1), SamplingParams.greedy(), 50, NO_STOP, queued);
        assertTrue(firstToken.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        scheduler.close();
        assertEquals(StopReason.CANCELLED, running.await());
        assertEquals(StopReason.CANCELLED, queued.await());
    }

    @Test
    void aSinkThatThrowsEndsOnlyItsOwnRequest() throws Exception {
        RuntimeException thrown = new IllegalStateException("the client went away");
        CompletableFuture<RuntimeException> failed = new CompletableFuture<>();
        TokenSink throwing = new TokenSink() {
            @Override public void onToken(int id, TokenLogprobs logprobs) { throw thrown; }
            @Override public void onDone(StopReason reason, GenerationStats stats) { failed.complete(null); }
            @Override public void onError(RuntimeException e) { failed.complete(e); }
        };
        RecordingSink other = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(2, CONTEXT, 16, 0))) {
            scheduler.submit(prompt(7), SamplingParams.greedy(), 5, NO_STOP, throwing);
            scheduler.submit(prompt(8), SamplingParams.greedy(), 5, NO_STOP, other);
            assertEquals(thrown, failed.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
            assertEquals(StopReason.TOKEN_LIMIT, other.await());
        }
        assertArrayEquals(alone(prompt(8), 5), other.ids());
    }

    /** The CPU backend, but a matmul fails while {@code failing} is set. */
    private static final class FailingBackend extends ForwardingBackend {
        volatile boolean failing;

        FailingBackend() {
            super(new VectorBackend(2));
        }

        @Override public void matmul(Buffer x, Weight w, Buffer out, int rows) {
            if (failing) throw new IllegalStateException("the device was lost");
            delegate.matmul(x, w, out, rows);
        }
        @Override public String description() { return "failing on demand"; }
    }

    @Test
    void aFailedForwardFailsTheRequestsInItAndTheSchedulerGoesOn() throws Exception {
        FailingBackend backend = new FailingBackend();
        try (TestModel failing = TestModel.open(Golden.modelDir("tiny-untied"), backend, CONTEXT, 16, 1)) {
            CountDownLatch decoding = new CountDownLatch(2), release = new CountDownLatch(1);
            RecordingSink first = new RecordingSink(), second = new RecordingSink(), after = new RecordingSink();
            TokenSink holding = new TokenSink() { // holds the scheduler thread at its second token
                @Override public void onToken(int id, TokenLogprobs logprobs) {
                    first.onToken(id, logprobs);
                    decoding.countDown();
                    if (decoding.getCount() == 0) await(release);
                }
                @Override public void onDone(StopReason reason, GenerationStats stats) { first.onDone(reason, stats); }
                @Override public void onError(RuntimeException e) { first.onError(e); }
            };
            try (Scheduler scheduler = new Scheduler(failing.model(), new Scheduler.Config(2, CONTEXT, 16, 1))) {
                scheduler.submit(prompt(13), SamplingParams.greedy(), 20, NO_STOP, holding);
                assertTrue(decoding.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
                scheduler.submit(prompt(14), SamplingParams.greedy(), 20, NO_STOP, second);
                backend.failing = true;
                release.countDown();
                Exception e1 = assertThrows(Exception.class, first::await);
                Exception e2 = assertThrows(Exception.class, second::await);
                for (Exception e : List.of(e1, e2)) assertEquals("the device was lost", e.getCause().getMessage());
                backend.failing = false;
                // The slots forgot what the failed forward may have written: the same prompt runs whole again.
                scheduler.submit(prompt(13), SamplingParams.greedy(), 5, NO_STOP, after);
                assertEquals(StopReason.TOKEN_LIMIT, after.await());
                assertEquals(0, after.stats.cachedTokens());
            }
            Generator alone = new Generator(failing.sequence(), NO_STOP, SamplingParams.greedy());
            assertArrayEquals(alone.generate(prompt(13), 5, id -> {}).ids(), after.ids());
        }
    }

    @Test
    void aNewRequestReusesTheSlotThatHoldsItsPrefix() throws Exception {
        int[] first = prompt(9);
        int[] generated = alone(first, 4);
        // The next turn: the first prompt, what was generated, and more.
        int[] next = new int[first.length + generated.length + 3];
        System.arraycopy(first, 0, next, 0, first.length);
        System.arraycopy(generated, 0, next, first.length, generated.length);
        System.arraycopy(prompt(10), 0, next, first.length + generated.length, 3);
        RecordingSink a = new RecordingSink(), other = new RecordingSink(), b = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(3, CONTEXT, 16, 0))) {
            scheduler.submit(prompt(11), SamplingParams.greedy(), 4, NO_STOP, other);
            scheduler.submit(first, SamplingParams.greedy(), 4, NO_STOP, a);
            assertEquals(StopReason.TOKEN_LIMIT, a.await());
            assertEquals(StopReason.TOKEN_LIMIT, other.await());
            scheduler.submit(next, SamplingParams.greedy(), 4, NO_STOP, b);
            assertEquals(StopReason.TOKEN_LIMIT, b.await());
            // The slot holds the first prompt and the generated tokens but the last (chosen, never run).
            assertEquals(first.length + generated.length - 1, b.stats.cachedTokens());
            assertEquals(next.length - b.stats.cachedTokens(), b.stats.promptTokens());
        }
        assertArrayEquals(generated, a.ids());
        assertArrayEquals(alone(next, 4), b.ids());
    }

    @Test
    void severalThreadsSubmittingAtOnceEachGetTheirOwnTokens() throws Exception {
        int threads = 4, perThread = 4;
        List<RecordingSink> recorders = new ArrayList<>();
        List<int[]> prompts = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(3, CONTEXT, 8, 64))) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<List<RecordingSink>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    List<RecordingSink> mine = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        RecordingSink r = new RecordingSink();
                        scheduler.submit(prompt(thread * perThread + i), SamplingParams.greedy(), 5, NO_STOP, r);
                        mine.add(r);
                    }
                    return mine;
                }));
            }
            start.countDown();
            for (int t = 0; t < threads; t++) {
                recorders.addAll(futures.get(t).get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
                for (int i = 0; i < perThread; i++) prompts.add(prompt(t * perThread + i));
            }
            for (RecordingSink r : recorders) assertEquals(StopReason.TOKEN_LIMIT, r.await());
        } finally {
            pool.shutdownNow();
        }
        for (int i = 0; i < recorders.size(); i++) {
            assertArrayEquals(alone(prompts.get(i), 5), recorders.get(i).ids(), "request " + i);
        }
    }

    @Test
    void sampledRequestsWithTheSameSeedGetTheSameTokens() throws Exception {
        SamplingParams params = new SamplingParams(0.8f, 20, 0.95f, 0f, 1.1f, 7);
        RecordingSink a = new RecordingSink(), b = new RecordingSink();
        try (Scheduler scheduler = new Scheduler(test.model(), new Scheduler.Config(2, CONTEXT, 16, 0))) {
            scheduler.submit(prompt(12), params, 8, NO_STOP, a);
            scheduler.submit(prompt(12), params, 8, NO_STOP, b);
            assertEquals(StopReason.TOKEN_LIMIT, a.await());
            assertEquals(StopReason.TOKEN_LIMIT, b.await());
        }
        Generator generator = new Generator(test.sequence(), NO_STOP, params);
        int[] expected = generator.generate(prompt(12), 8, id -> {}).ids();
        assertArrayEquals(expected, a.ids());
        assertArrayEquals(expected, b.ids());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
