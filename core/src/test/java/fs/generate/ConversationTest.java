package fs.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.cpu.VectorBackend;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.model.Golden;
import fs.model.TestModel;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConversationTest {
    private static final Path MODEL = Golden.modelDir("tiny-untied");

    @Test
    void warmingUpLeavesTheSharedStartInTheCacheAndChangesNoAnswer() throws IOException {
        Tokenizer tokenizer = Tokenizer.load(MODEL);
        ChatTemplate template = ChatTemplate.load(MODEL);
        try (TestModel test = TestModel.open(MODEL, new VectorBackend(2), 256, 16, 1)) {
            Generator generator = new Generator(test.sequence(), new int[0], SamplingParams.greedy());
            Conversation cold = new Conversation(generator, tokenizer, template, "Be brief.", null, 6);
            Generator.Generation coldAnswer = cold.reply("Hello there", id -> {}, () -> false);
            assertEquals(0, coldAnswer.stats().cachedTokens());

            Conversation warm = new Conversation(generator, tokenizer, template, "Be brief.", null, 6);
            warm.warmUp(() -> false);
            Generator.Generation warmAnswer = warm.reply("Hello there", id -> {}, () -> false);
            assertArrayEquals(coldAnswer.ids(), warmAnswer.ids());
            // The system block and the user header ("<|im_start|>user\n"), not the message: reused, not run again.
            int total = coldAnswer.stats().promptTokens();
            int reused = warmAnswer.stats().cachedTokens();
            int header = tokenizer.encode("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n").length;
            assertEquals(header, reused);
            assertEquals(total - reused, warmAnswer.stats().promptTokens());

            // Past the first turn a warm-up does nothing: the next turn reuses the whole previous exchange.
            warm.warmUp(() -> false);
            Generator.Generation second = warm.reply("And again", id -> {}, () -> false);
            assertTrue(second.stats().cachedTokens() > total, "reused " + second.stats().cachedTokens());
        }
    }

    @Test
    void aStoppedAnswerStaysInTheHistoryAsFarAsItWasGenerated() throws IOException {
        Tokenizer tokenizer = Tokenizer.load(MODEL);
        ChatTemplate template = ChatTemplate.load(MODEL);
        try (TestModel test = TestModel.open(MODEL, new VectorBackend(2), 256, 16, 1)) {
            Generator generator = new Generator(test.sequence(), new int[0], SamplingParams.greedy());
            Conversation conversation = new Conversation(generator, tokenizer, template, null, null, 8);
            int[] generated = {0};
            Generator.Generation stopped =
                    conversation.reply("Hello there", id -> generated[0]++, () -> generated[0] == 3);
            assertEquals(StopReason.CANCELLED, stopped.stopReason());
            assertEquals(3, stopped.ids().length);

            Generator.Generation next = conversation.reply("And again", id -> {}, () -> false);
            int[] expectedPrompt = tokenizer.encode(template.render(List.of(
                    new ChatMessage("user", "Hello there"),
                    new ChatMessage("assistant", tokenizer.decode(stopped.ids(), false)),
                    new ChatMessage("user", "And again")), true, null));
            assertEquals(expectedPrompt.length, next.stats().cachedTokens() + next.stats().promptTokens());
            assertTrue(next.stats().cachedTokens() > 0, "the first turn's cache is reused");
            assertArrayEquals(freshAnswer(expectedPrompt), next.ids());
        }
    }

    @Test
    void anAnswerStoppedBeforeItsFirstTokenLeavesNoTurnInTheHistory() throws IOException {
        Tokenizer tokenizer = Tokenizer.load(MODEL);
        ChatTemplate template = ChatTemplate.load(MODEL);
        try (TestModel test = TestModel.open(MODEL, new VectorBackend(2), 256, 16, 1)) {
            Generator generator = new Generator(test.sequence(), new int[0], SamplingParams.greedy());
            Conversation conversation = new Conversation(generator, tokenizer, template, null, null, 8);
            Generator.Generation stopped = conversation.reply("Hello there", id -> {}, () -> true);
            assertEquals(StopReason.CANCELLED, stopped.stopReason());
            assertEquals(0, stopped.ids().length);

            Generator.Generation next = conversation.reply("And again", id -> {}, () -> false);
            int[] expectedPrompt = tokenizer.encode(
                    template.render(List.of(new ChatMessage("user", "And again")), true, null));
            assertEquals(expectedPrompt.length, next.stats().cachedTokens() + next.stats().promptTokens());
            assertArrayEquals(freshAnswer(expectedPrompt), next.ids());
        }
    }

    /** The greedy answer of a new generator (nothing cached) to {@code prompt}, 8 tokens at most. */
    private static int[] freshAnswer(int[] prompt) {
        try (TestModel test = TestModel.open(MODEL, new VectorBackend(2), 256, 16, 1)) {
            return new Generator(test.sequence(), new int[0], SamplingParams.greedy()).generate(prompt, 8, id -> {}).ids();
        }
    }
}
