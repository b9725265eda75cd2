package fs.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.cpu.VectorBackend;
import fs.chat.ChatTemplate;
import fs.model.Golden;
import fs.model.TestModel;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ConversationTest {
    private static final Path MODEL = Golden.modelDir("tiny-untied");

    @Test
    void warmingUpLeavesTheSharedStartInTheCacheAndChangesNoAnswer() throws IOException {
        Tokenizer tokenizer = Tokenizer.load(MODEL);
        ChatTemplate template = ChatTemplate.load(MODEL);
        try (TestModel test = TestModel.open(MODEL, new VectorBackend(2), 256, 16, 1)) {
            Generator generator = new Generator(test.model(), new int[0], SamplingParams.greedy());
            Conversation cold = new Conversation(generator, tokenizer, template, "Be brief.", null, 6);
            Generator.Generation coldAnswer = cold.reply("Hello there", id -> {});
            assertEquals(0, coldAnswer.stats().cachedTokens());

            Conversation warm = new Conversation(generator, tokenizer, template, "Be brief.", null, 6);
            warm.warmUp();
            Generator.Generation warmAnswer = warm.reply("Hello there", id -> {});
            assertArrayEquals(coldAnswer.ids(), warmAnswer.ids());
            // The system block and the user header ("<|im_start|>user\n"), not the message: reused, not run again.
            int total = coldAnswer.stats().promptTokens();
            int reused = warmAnswer.stats().cachedTokens();
            int header = tokenizer.encode("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n").length;
            assertEquals(header, reused);
            assertEquals(total - reused, warmAnswer.stats().promptTokens());

            // Past the first turn a warm-up does nothing: the next turn reuses the whole previous exchange.
            warm.warmUp();
            Generator.Generation second = warm.reply("And again", id -> {});
            assertTrue(second.stats().cachedTokens() > total, "reused " + second.stats().cachedTokens());
        }
    }
}
