package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.cpu.VectorBackend;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.model.FeedForward;
import fs.model.TestModel;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The facade on a Qwen3-MoE, models/tiny-moe (Hugging Face form, sharded, per-expert tensors, layer 1 dense): a greedy
 * answer, streamed and whole, is what the existing {@link Generator} produces from the same templated prompt (as
 * {@link GreedyReference} has it for tiny-tied), alone and from two chats at once on two slots.
 */
class MoeFsModelTest {
    static final Path MODEL = Path.of(System.getProperty("fs.repo"), "models", "tiny-moe");
    private static final int CONTEXT = 256, MAX_TOKENS = 10;

    /** The Generator's greedy text after {@code question} on a model of its own. */
    private static String expected(String question) {
        try (TestModel model = TestModel.open(MODEL, new VectorBackend(2), CONTEXT, 64, 1);
                ModelSource source = ModelSource.open(MODEL)) {
            Tokenizer tokenizer = Tokenizer.load(MODEL);
            int[] prompt = tokenizer.encode(ChatTemplate.load(MODEL).render(List.of(ChatMessage.user(question)), true,
                    null));
            Generator.Generation generation = new Generator(model.sequence(), source.stopIds(), SamplingParams.greedy())
                    .generate(prompt, MAX_TOKENS, id -> {});
            return tokenizer.decode(generation.ids(), true);
        }
    }

    @Test
    void greedyAnswersAreTheGeneratorsAloneAndTogether() throws Exception {
        String first = "Why is the sky blue?", second = "Name three rivers.";
        String want1 = expected(first), want2 = expected(second);
        ChatParams greedy = ChatParams.defaults().withTemperature(0).withMaxTokens(MAX_TOKENS);
        try (FsModel model = FsModel.load(MODEL.toString(), FsModel.Options.defaults().withBackend("cpu")
                .withThreads(2).withContextLength(2 * CONTEXT).withParallelSlots(2))) {
            try (ModelSource source = ModelSource.open(MODEL)) {
                assertTrue(source.config().feedForward(0) instanceof FeedForward.Experts, "an MoE layer");
                assertTrue(source.config().feedForward(1) instanceof FeedForward.Dense, "mlp_only_layers");
            }
            StringBuilder streamed = new StringBuilder();
            try (Chat chat = model.newChat(greedy)) {
                Reply reply = chat.send(first, streamed::append);
                assertFalse(reply.text().isEmpty(), "the model says something");
                assertEquals(want1, reply.text());
                assertEquals(reply.text(), streamed.toString());
            }
            CompletableFuture<String> a = CompletableFuture.supplyAsync(() -> answer(model, greedy, first));
            CompletableFuture<String> b = CompletableFuture.supplyAsync(() -> answer(model, greedy, second));
            assertEquals(want1, a.get());
            assertEquals(want2, b.get());
        }
    }

    private static String answer(FsModel model, ChatParams params, String question) {
        try (Chat chat = model.newChat(params)) {
            return chat.send(question, text -> {}).text();
        }
    }
}
