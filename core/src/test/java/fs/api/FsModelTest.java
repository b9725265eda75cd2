package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.engine.Engine;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.source.ModelSource;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The facade on models/tiny-tied: greedy answers equal what the existing Generator produces from the same templated
 * prompt (what {@code fs run --temp 0} prints), alone, over two turns and from concurrent chats; cancellation, and
 * the errors a caller can make.
 */
class FsModelTest {
    private static final int CONTEXT = 512;
    private static final int MAX_TOKENS = 12;

    private static GreedyReference reference;
    private static FsModel model;

    @BeforeAll
    static void load() {
        reference = new GreedyReference(CONTEXT);
        model = FsModel.load(GreedyReference.MODEL.toString(), FsModel.Options.defaults().withBackend("cpu")
                .withThreads(2).withContextLength(2 * CONTEXT).withParallelSlots(2));
    }

    @AfterAll
    static void close() {
        if (model != null) model.close();
        if (reference != null) reference.close();
    }

    private static ChatParams greedy() {
        return ChatParams.defaults().withTemperature(0).withMaxTokens(MAX_TOKENS);
    }

    private static Generator.Generation expected(List<ChatMessage> messages) {
        return reference.generate(messages, MAX_TOKENS);
    }

    private static String expectedText(List<ChatMessage> messages) {
        return reference.text(expected(messages));
    }

    private static int promptLength(List<ChatMessage> messages) {
        return reference.prompt(messages).length;
    }

    @Test
    void greedyAnswerEqualsTheGeneratorsAndStreamsTheSameText() {
        List<ChatMessage> messages = List.of(ChatMessage.user("Why is the sky blue?"));
        Generator.Generation want = expected(messages);
        StringBuilder streamed = new StringBuilder();
        try (Chat chat = model.newChat(greedy())) {
            Reply reply = chat.send("Why is the sky blue?", streamed::append);
            assertFalse(reply.text().isEmpty(), "the model says something");
            assertEquals(reference.text(want), reply.text());
            assertEquals(reply.text(), streamed.toString());
            assertEquals("", reply.reasoning());
            assertEquals(want.stopReason().name(), reply.stopReason().name());
            assertEquals(want.ids().length, reply.generatedTokens());
            assertEquals(promptLength(messages), reply.promptTokens());
        }
    }

    @Test
    void aChatKeepsItsHistoryAndReusesTheCachedPrefix() {
        try (Chat chat = model.newChat(greedy().withSystemPrompt("You are terse."))) {
            Reply first = chat.send("Hello", text -> {});
            Reply second = chat.send("And then?", text -> {});
            List<ChatMessage> turns = List.of(ChatMessage.system("You are terse."), ChatMessage.user("Hello"),
                    ChatMessage.assistant(first.text()), ChatMessage.user("And then?"));
            assertEquals(expectedText(turns), second.text());
            assertEquals(promptLength(turns), second.promptTokens());
            assertTrue(second.cachedTokens() > 0, "the second turn reuses the first's prefix");
            assertEquals(List.of(Message.user("Hello"), Message.assistant(first.text()), Message.user("And then?"),
                    Message.assistant(second.text())), chat.history());
        }
    }

    @Test
    void aChatStartedFromAHistoryAnswersAsIfItHadLivedIt() {
        List<Message> history = List.of(Message.user("Hi"), Message.assistant("Hello! How can I help?"));
        List<ChatMessage> turns = List.of(ChatMessage.user("Hi"), ChatMessage.assistant("Hello! How can I help?"),
                ChatMessage.user("Count to three."));
        try (Chat chat = model.newChat(greedy(), history)) {
            assertEquals(expectedText(turns), chat.send("Count to three.", t -> {}).text());
        }
    }

    @Test
    void concurrentChatsEachGetTheirOwnGreedyAnswer() throws Exception {
        List<String> questions = List.of("One?", "Two, please.", "What is three?", "Four!");
        List<String> want = new ArrayList<>();
        for (String q : questions) want.add(expectedText(List.of(ChatMessage.user(q))));
        // Four chats on two slots: two decode together, two wait for a slot.
        try (ExecutorService pool = Executors.newFixedThreadPool(questions.size())) {
            List<Future<String>> answers = new ArrayList<>();
            for (String q : questions) {
                answers.add(pool.submit(() -> {
                    try (Chat chat = model.newChat(greedy())) {
                        return chat.send(q, t -> {}).text();
                    }
                }));
            }
            for (int i = 0; i < questions.size(); i++) {
                assertEquals(want.get(i), answers.get(i).get(), questions.get(i));
            }
        }
    }

    @Test
    void cancellingStopsTheAnswerAndKeepsWhatCame() {
        try (Chat chat = model.newChat(ChatParams.defaults().withTemperature(0).withMaxTokens(200))) {
            Cancellation cancellation = new Cancellation();
            Reply reply = chat.send("Tell me a long story.", text -> cancellation.cancel(), cancellation);
            assertEquals(StopReason.CANCELLED, reply.stopReason());
            assertTrue(reply.generatedTokens() >= 1 && reply.generatedTokens() < 200, "stopped early: " + reply);
            assertEquals(2, chat.history().size(), "the cut answer stays in the history");

            Reply none = chat.send("Another one.", text -> {}, cancellation); // already cancelled: ends at once
            assertEquals(StopReason.CANCELLED, none.stopReason());
            assertEquals(0, none.generatedTokens());
            assertEquals(2, chat.history().size(), "a message cancelled before its first token leaves no trace");
        }
    }

    @Test
    void aConsumerThatThrowsStopsTheAnswerAndTheChatGoesOn() {
        try (Chat chat = model.newChat(greedy())) {
            RuntimeException thrown = assertThrows(IllegalStateException.class,
                    () -> chat.send("Hello", text -> { throw new IllegalStateException("enough"); }));
            assertEquals("enough", thrown.getMessage());
            assertEquals(List.of(), chat.history());
            assertEquals(expectedText(List.of(ChatMessage.user("Hello"))), chat.send("Hello", text -> {}).text());
        }
    }

    @Test
    void theAdditivePenaltiesReachTheSamplerAndTheOthersKeepTheModelsDefaults() {
        SamplingParams modelDefaults = new SamplingParams(0.6f, 20, 0.95f, 0f, 1.1f, 9L);
        ChatParams params = ChatParams.defaults().withPresencePenalty(0.5f).withFrequencyPenalty(-1.25f).withSeed(3);
        assertEquals(new SamplingParams(0.6f, 20, 0.95f, 0f, 1.1f, 0.5f, -1.25f, 3L), params.sampling(modelDefaults));
        assertEquals(modelDefaults, ChatParams.defaults().withSeed(9).sampling(modelDefaults));
    }

    @Test
    void mistakesAreOneLineFsExceptions() {
        FsException missing = assertThrows(FsException.class,
                () -> FsModel.load(GreedyReference.MODEL.resolve("missing.gguf").toString(),
                        FsModel.Options.defaults()));
        assertTrue(missing.getMessage().endsWith("missing.gguf: no such file"), missing.getMessage());
        assertThrows(FsException.class, () -> FsModel.Options.defaults().withBackend("gpu"));
        assertThrows(FsException.class, () -> FsModel.Options.defaults().withParallelSlots(0));
        assertEquals("unknown KV cache type 'q4_0': use one of f32, f16, bf16, q8_0",
                assertThrows(FsException.class, () -> FsModel.Options.defaults().withCacheTypeK("q4_0")).getMessage());
        assertThrows(FsException.class, () -> FsModel.Options.defaults().withCacheTypeV("f8"));
        assertEquals("-ngl must be a number of layers (0 or more), auto or all, got 'half'", assertThrows(
                FsException.class, () -> FsModel.Options.defaults().withGpuLayers("half")).getMessage());
        assertEquals("gpuLayers 2 puts layers on an OpenCL device: it needs backend opencl or auto, not cpu",
                assertThrows(FsException.class,
                        () -> FsModel.Options.defaults().withGpuLayers("2").withBackend("cpu")).getMessage());
        assertThrows(FsException.class, () -> FsModel.Options.defaults().withCpuMoeLayers(-1));
        assertThrows(FsException.class, () -> ChatParams.defaults().withTemperature(-1));
        assertThrows(FsException.class, () -> ChatParams.defaults().withTopP(0));
        assertThrows(FsException.class, () -> ChatParams.defaults().withMaxTokens(-2));
        FsException presence = assertThrows(FsException.class, () -> ChatParams.defaults().withPresencePenalty(3));
        assertTrue(presence.getMessage().startsWith("presence penalty"), presence.getMessage());
        FsException frequency =
                assertThrows(FsException.class, () -> ChatParams.defaults().withFrequencyPenalty(-2.5f));
        assertTrue(frequency.getMessage().startsWith("frequency penalty"), frequency.getMessage());
        try (Chat chat = model.newChat(ChatParams.defaults().withMaxTokens(CONTEXT))) {
            FsException tooLong = assertThrows(FsException.class, () -> chat.send("Hello", text -> {}));
            assertTrue(tooLong.getMessage().contains("do not fit the context of " + CONTEXT), tooLong.getMessage());
            assertEquals(List.of(), chat.history(), "a message that did not fit leaves the history as it was");
        }
        assertFalse(missing.getMessage().contains("\n"));
    }

    @Test
    void aClosedModelOrChatRefusesToSend() {
        FsModel other = FsModel.load(GreedyReference.MODEL.toString(),
                FsModel.Options.defaults().withBackend("cpu").withThreads(1).withContextLength(64));
        Chat chat = other.newChat(greedy());
        other.close();
        other.close(); // idempotent
        assertEquals("the model is closed",
                assertThrows(FsException.class, () -> chat.send("Hi", t -> {})).getMessage());
        Chat closed = model.newChat(greedy());
        closed.close();
        assertEquals("the chat is closed",
                assertThrows(FsException.class, () -> closed.send("Hi", t -> {})).getMessage());
    }

    /** fs.api loads through the engine: its context default, shared out among the slots, and its context check. */
    @Test
    void theContextIsTheEnginesSharedOutAmongTheSlots() {
        int engineDefault;
        int max;
        try (ModelSource source = Engine.open(GreedyReference.MODEL.toString(), new PrintWriter(Writer.nullWriter()))) {
            engineDefault = Engine.defaultContextLength(source.config());
            max = source.config().maxPositionEmbeddings();
        }
        try (FsModel two = FsModel.load(GreedyReference.MODEL.toString(),
                FsModel.Options.defaults().withBackend("cpu").withThreads(1).withParallelSlots(2))) {
            assertEquals(engineDefault / 2, two.contextLength());
        }
        FsException tooLong = assertThrows(FsException.class, () -> FsModel.load(GreedyReference.MODEL.toString(),
                FsModel.Options.defaults().withBackend("cpu").withThreads(1).withContextLength(max + 1)));
        assertEquals("the context length " + (max + 1) + " is out of range: this model allows 1.." + max
                + " positions", tooLong.getMessage());
    }

    /** The cache types as the engine settles them: f32 on the exact java path unless named, a named one as named. */
    @Test
    void theCacheTypesAreChosenAsOnTheCommandLine() {
        FsModel.Options java = FsModel.Options.defaults().withBackend("java").withThreads(1).withContextLength(64);
        try (FsModel exact = FsModel.load(GreedyReference.MODEL.toString(), java)) {
            assertEquals("f32", exact.cacheTypes());
        }
        // A named type reaches the engine: q8_0 does not fit tiny-tied's heads of 16.
        FsException q8 = assertThrows(FsException.class, () -> FsModel.load(GreedyReference.MODEL.toString(),
                java.withCacheTypeV("q8_0")));
        assertEquals("a q8_0 KV cache needs a head dimension that is a multiple of 32; this model's is 16 (use f32, "
                + "f16 or bf16)", q8.getMessage());
    }
}
