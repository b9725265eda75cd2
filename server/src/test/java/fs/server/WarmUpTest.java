package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import fs.generate.GenerationStats;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.TokenConstraint;
import fs.generate.TokenSink;
import fs.tokenizer.Tokenizer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The warm-up compiles the batched kernels too: after a request alone, one in every slot at once. */
class WarmUpTest {
    /**
     * Finishes the requests it holds only once it holds as many as the batch it expects next (one, then every slot):
     * a warm-up that waited for each request before sending the next would never finish.
     */
    private static final class BatchExpectingEngine implements CompletionEngine {
        private final int slots;
        private final List<TokenSink> held = new ArrayList<>();
        private final List<Integer> batches = new ArrayList<>();
        private int expected = 1;

        BatchExpectingEngine(int slots) {
            this.slots = slots;
        }

        @Override
        public synchronized Handle submit(int[] prompt, SamplingParams params, int maxTokens, int topLogprobs,
                                          TokenConstraint constraint, TokenSink sink) {
            held.add(sink);
            if (held.size() == expected) {
                batches.add(held.size());
                for (TokenSink each : held) {
                    each.onToken(0, null);
                    each.onDone(StopReason.TOKEN_LIMIT, new GenerationStats(prompt.length, 0, 1, 1, 0, 1));
                }
                held.clear();
                expected = slots;
            }
            return () -> {};
        }

        @Override
        public int[] stopIds() {
            return new int[] {1};
        }

        @Override
        public int contextLength() {
            return 64;
        }

        @Override
        public Load load() {
            return new Load(slots, 0, 0);
        }

        @Override
        public void close() {}
    }

    @Test
    void oneRequestAloneThenOneInEverySlotAtOnce() throws Exception {
        Tokenizer tokenizer = Tokenizer.load(TestServer.MODEL);
        BatchExpectingEngine engine = new BatchExpectingEngine(4);
        ServedModel served = ServedModel.forChat("m", 0,
                new ModelDetails("safetensors", "qwen3", 0, "0", "BF16", 0, Instant.EPOCH), tokenizer, () -> null, SamplingParams::greedy, engine);
        Thread warming = Thread.ofVirtual().start(() -> {
            try {
                WarmUp.run(served);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        warming.join(Duration.ofSeconds(60));
        assertFalse(warming.isAlive(), "the warm-up waited for requests it should have sent together");
        assertEquals(List.of(1, 4), engine.batches);
    }
}
