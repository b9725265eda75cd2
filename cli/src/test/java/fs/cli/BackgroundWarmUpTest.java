package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.cpu.VectorBackend;
import fs.chat.ChatTemplate;
import fs.generate.Conversation;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.model.Golden;
import fs.model.TestModel;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class BackgroundWarmUpTest {
    private static final Path MODEL = Golden.modelDir("tiny-untied");
    private static final String SYSTEM = "Be brief.";

    private static Conversation conversation(TestModel test) throws IOException {
        Generator generator = new Generator(test.sequence(), new int[0], SamplingParams.greedy());
        return new Conversation(generator, Tokenizer.load(MODEL), ChatTemplate.load(MODEL), SYSTEM, null, 4);
    }

    @Test
    void afterAwaitTheFirstAnswerReusesWhatTheWarmUpRan() throws IOException {
        try (TestModel test = TestModel.open(MODEL, new VectorBackend(2), 256, 16, 1)) {
            Conversation conversation = conversation(test);
            BackgroundWarmUp.start(conversation).await();
            Generator.Generation first = conversation.reply("Hello there", id -> {}, () -> false);
            int header = Tokenizer.load(MODEL)
                    .encode("<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n").length;
            assertEquals(header, first.stats().cachedTokens());
        }
    }

    @Test
    void aWarmUpThatFailedThrowsAtAwaitAndNotAtStop() throws IOException {
        // A context too small for the system block: the warm-up's own prompt does not fit.
        try (TestModel test = TestModel.open(MODEL, new VectorBackend(2), 4, 4, 1)) {
            Conversation conversation = conversation(test);
            FsException e = assertThrows(FsException.class, () -> BackgroundWarmUp.start(conversation).await());
            assertTrue(e.getMessage().contains("do not fit the context of 4"), e.getMessage());
            BackgroundWarmUp.start(conversation).stop();
        }
    }
}
