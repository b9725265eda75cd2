package fs.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.cpu.VectorBackend;
import fs.model.Golden;
import fs.model.TestModel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stopping, context limits and KV prefix reuse, on tiny-untied (whose greedy continuation has distinct tokens). */
class GeneratorTest {
    private static final int[] NO_STOP = {};

    private static TestModel open(int contextLength) {
        return TestModel.open(Golden.modelDir("tiny-untied"), new VectorBackend(2), contextLength, 16, 1);
    }

    @Test
    void stopsAtTheTokenLimit() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        try (TestModel test = open(64)) {
            Generator generator = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy());
            Generator.Generation generation = generator.generate(golden.greedyPromptIds(), 5, id -> {});
            assertArrayEquals(Arrays.copyOf(golden.greedyGeneratedIds(), 5), generation.ids());
            assertEquals(StopReason.TOKEN_LIMIT, generation.stopReason());
            assertEquals(golden.greedyPromptIds().length, generation.stats().promptTokens());
            assertEquals(4, generation.stats().decodeSteps(), "the last token is chosen but never run");
        }
    }

    @Test
    void stopsAtAStopTokenWithoutEmittingIt() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int[] expected = golden.greedyGeneratedIds();
        int stop = expected[3];
        int firstStop = 0;
        while (expected[firstStop] != stop) firstStop++;
        try (TestModel test = open(64)) {
            Generator generator = new Generator(test.sequence(), new int[] {stop}, SamplingParams.greedy());
            Generator.Generation generation = generator.generate(golden.greedyPromptIds(), 16, id -> {});
            assertArrayEquals(Arrays.copyOf(expected, firstStop), generation.ids());
            assertEquals(StopReason.END_OF_SEQUENCE, generation.stopReason());
        }
    }

    @Test
    void withoutALimitStopsWhenTheContextIsFull() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int prompt = golden.greedyPromptIds().length;
        try (TestModel test = open(prompt + 6)) {
            Generator generator = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy());
            Generator.Generation generation = generator.generate(golden.greedyPromptIds(), -1, id -> {});
            assertArrayEquals(Arrays.copyOf(golden.greedyGeneratedIds(), 6), generation.ids());
            assertEquals(StopReason.CONTEXT_FULL, generation.stopReason());
        }
    }

    @Test
    void aPromptPlusLimitBeyondTheContextIsRefusedBeforeAnyWork() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int prompt = golden.greedyPromptIds().length;
        try (TestModel test = open(prompt + 3)) {
            Generator generator = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy());
            int[] streamed = {0};
            FsException e = assertThrows(FsException.class,
                    () -> generator.generate(golden.greedyPromptIds(), 4, id -> streamed[0]++));
            assertTrue(e.getMessage().contains("do not fit the context of " + (prompt + 3)), e.getMessage());
            assertEquals(0, streamed[0]);
            assertThrows(FsException.class, () -> generator.generate(new int[prompt + 4], -1, id -> {}));
            assertThrows(FsException.class, () -> generator.generate(new int[0], 1, id -> {}));
        }
    }

    @Test
    void aPromptThatExtendsThePreviousOneReusesTheCache() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int[] first = golden.greedyPromptIds();
        int[] answer = Arrays.copyOf(golden.greedyGeneratedIds(), 4);
        // The next turn: the previous prompt, the answer, and a few new tokens (some prompt tokens again).
        int[] second = concat(first, answer, Arrays.copyOf(golden.promptIds(), 5));
        int[] fresh;
        try (TestModel test = open(64)) {
            fresh = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy()).generate(second, 6, id -> {}).ids();
        }
        try (TestModel test = open(64)) {
            Generator generator = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy());
            assertArrayEquals(answer, generator.generate(first, 4, id -> {}).ids());
            Generator.Generation next = generator.generate(second, 6, id -> {});
            assertArrayEquals(fresh, next.ids());
            // The cache holds the first prompt and the answer but its last token (chosen, never run).
            assertEquals(first.length + answer.length - 1, next.stats().cachedTokens());
            assertEquals(second.length - next.stats().cachedTokens(), next.stats().promptTokens());

            // A prompt that diverges early reuses only the common part; the result equals a fresh run's.
            generator.reset();
            Generator.Generation afterReset = generator.generate(second, 6, id -> {});
            assertEquals(0, afterReset.stats().cachedTokens());
            assertArrayEquals(fresh, afterReset.ids());
        }
    }

    @Test
    void samplingWithASeedIsRepeatable() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        SamplingParams params = new SamplingParams(1.5f, 50, 0.95f, 0f, 1.1f, 1234L);
        try (TestModel test = open(64)) {
            int[] once = new Generator(test.sequence(), NO_STOP, params).generate(golden.greedyPromptIds(), 8, id -> {}).ids();
            int[] again = new Generator(test.sequence(), NO_STOP, params).generate(golden.greedyPromptIds(), 8, id -> {}).ids();
            assertEquals(8, once.length);
            assertArrayEquals(once, again);
        }
    }

    @Test
    void aStopRequestedAtTheKthTokenEndsWithExactlyKTokensAndTheNextCallReusesTheCache() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        int[] first = golden.greedyPromptIds();
        int k = 3;
        List<Integer> streamed = new ArrayList<>();
        boolean[] stop = {false};
        Generator.TokenListener stopAtK = id -> {
            streamed.add(id);
            if (streamed.size() == k) stop[0] = true;
        };
        try (TestModel test = open(64)) {
            Generator generator = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy());
            Generator.Generation stopped = generator.generate(first, 16, stopAtK, () -> stop[0]);
            assertArrayEquals(Arrays.copyOf(golden.greedyGeneratedIds(), k), stopped.ids());
            assertEquals(k, streamed.size());
            assertEquals(StopReason.CANCELLED, stopped.stopReason());
            assertEquals(k - 1, stopped.stats().decodeSteps(), "the token it stopped at is chosen but never run");

            // The next turn carries the stopped answer: the cache holds all of it but its last token.
            int[] second = concat(first, stopped.ids(), Arrays.copyOf(golden.promptIds(), 5));
            Generator.Generation next = generator.generate(second, 6, id -> {});
            assertEquals(first.length + k - 1, next.stats().cachedTokens());
            assertArrayEquals(freshGreedy(second, 6), next.ids());
            assertEquals(StopReason.TOKEN_LIMIT, next.stopReason());
        }
    }

    @Test
    void aStopDuringThePromptKeepsTheBatchesThatRanAndTheNextCallGoesOnFromThem() throws IOException {
        Golden golden = Golden.load("tiny-untied");
        // Three batches of the test model's 16 rows: 16, 16 and 8 tokens.
        int[] prompt = Arrays.copyOf(concat(golden.promptIds(), golden.greedyPromptIds(), golden.promptIds(),
                golden.greedyPromptIds(), golden.promptIds(), golden.greedyPromptIds()), 40);
        assertEquals(40, prompt.length, "the golden prompts are long enough");
        try (TestModel test = open(64)) {
            Generator generator = new Generator(test.sequence(), NO_STOP, SamplingParams.greedy());
            int[] streamed = {0};
            Generator.Generation before = generator.generate(prompt, 6, id -> streamed[0]++, () -> true);
            assertEquals(StopReason.CANCELLED, before.stopReason());
            assertEquals(0, before.stats().promptTokens(), "a stop requested before the call runs nothing");

            int[] asked = {0};
            Generator.Generation stopped = generator.generate(prompt, 6, id -> streamed[0]++, () -> ++asked[0] > 1);
            assertEquals(StopReason.CANCELLED, stopped.stopReason());
            assertEquals(0, stopped.ids().length);
            assertEquals(0, streamed[0]);
            assertEquals(16, stopped.stats().promptTokens(), "the first batch ran before the stop was seen");

            Generator.Generation resumed = generator.generate(prompt, 6, id -> {});
            assertEquals(16, resumed.stats().cachedTokens());
            assertEquals(24, resumed.stats().promptTokens());
            assertArrayEquals(freshGreedy(prompt, 6), resumed.ids());
        }
    }

    /** What a new generator, with nothing cached, generates greedily from {@code prompt}. */
    private static int[] freshGreedy(int[] prompt, int maxNewTokens) {
        try (TestModel test = open(64)) {
            return new Generator(test.sequence(), NO_STOP, SamplingParams.greedy()).generate(prompt, maxNewTokens, id -> {})
                    .ids();
        }
    }

    private static int[] concat(int[]... parts) {
        return Arrays.stream(parts).flatMapToInt(Arrays::stream).toArray();
    }
}
