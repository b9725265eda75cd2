package fs.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.output.FinishReason;
import fs.FsException;
import fs.api.ChatParams;
import fs.api.FsModel;
import fs.api.GreedyReference;
import fs.chat.ChatMessage;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The provider against the library directly, on models/tiny-tied: greedy answers, streamed and not, equal the
 * Generator's on the same conversation (what {@code fs run --temp 0} prints); what fs cannot do is refused; reasoning
 * reaches {@code onPartialThinking}.
 */
class FsLangChain4jTest {
    private static final int CONTEXT = 512;
    private static final int MAX_TOKENS = 12;
    private static final String QUESTION = "Why is the sky blue?";

    private static GreedyReference reference;
    private static FsModel model;
    private static FsChatModel chatModel;
    private static FsStreamingChatModel streamingModel;

    @BeforeAll
    static void load() {
        reference = new GreedyReference(CONTEXT);
        model = FsModel.load(GreedyReference.MODEL.toString(), FsModel.Options.defaults().withBackend("cpu")
                .withThreads(2).withContextLength(CONTEXT));
        ChatParams greedy = ChatParams.defaults().withTemperature(0).withMaxTokens(MAX_TOKENS);
        chatModel = new FsChatModel(model, greedy);
        streamingModel = new FsStreamingChatModel(model, greedy);
    }

    @AfterAll
    static void close() {
        if (model != null) model.close();
        if (reference != null) reference.close();
    }

    private static FinishReason finishReason(Generator.Generation generation) {
        return generation.stopReason() == StopReason.END_OF_SEQUENCE ? FinishReason.STOP : FinishReason.LENGTH;
    }

    @Test
    void chatModelAnswersAsTheGenerator() {
        List<ChatMessage> messages = List.of(ChatMessage.user(QUESTION));
        Generator.Generation want = reference.generate(messages, MAX_TOKENS);
        ChatResponse response = chatModel.chat(ChatRequest.builder().messages(UserMessage.from(QUESTION)).build());
        assertEquals(reference.text(want), response.aiMessage().text());
        assertNull(response.aiMessage().thinking());
        assertEquals(finishReason(want), response.finishReason());
        assertEquals(reference.prompt(messages).length, response.tokenUsage().inputTokenCount());
        assertEquals(want.ids().length, response.tokenUsage().outputTokenCount());
        assertEquals(reference.text(want), chatModel.chat(QUESTION), "the String convenience method");
    }

    @Test
    void aWholeConversationGoesThroughTheTemplate() {
        List<ChatMessage> messages = List.of(ChatMessage.system("Be brief."), ChatMessage.user("Hi"),
                ChatMessage.assistant("Hello!"), ChatMessage.user(QUESTION));
        ChatResponse response = chatModel.chat(ChatRequest.builder().messages(SystemMessage.from("Be brief."),
                UserMessage.from("Hi"), AiMessage.from("Hello!"), UserMessage.from(QUESTION)).build());
        assertEquals(reference.text(reference.generate(messages, MAX_TOKENS)), response.aiMessage().text());
    }

    @Test
    void theRequestsParametersOverrideTheDefaults() {
        ChatResponse response = chatModel.chat(ChatRequest.builder().messages(UserMessage.from(QUESTION))
                .maxOutputTokens(3).build());
        Generator.Generation want = reference.generate(List.of(ChatMessage.user(QUESTION)), 3);
        assertEquals(reference.text(want), response.aiMessage().text());
        assertEquals(want.ids().length, response.tokenUsage().outputTokenCount());
    }

    @Test
    void streamingModelStreamsTheGeneratorsAnswer() throws Exception {
        Generator.Generation want = reference.generate(List.of(ChatMessage.user(QUESTION)), MAX_TOKENS);
        List<String> pieces = new ArrayList<>();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        streamingModel.chat(QUESTION, new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
                pieces.add(partial);
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        ChatResponse response = done.get(60, TimeUnit.SECONDS);
        assertEquals(reference.text(want), String.join("", pieces));
        assertEquals(reference.text(want), response.aiMessage().text());
        assertEquals(finishReason(want), response.finishReason());
    }

    @Test
    void aRequestsPresenceAndFrequencyPenaltiesReachTheSampler() {
        // Sampled hot, so that penalties of this size change the draws on a model whose top logits are far apart.
        ChatParams hot = ChatParams.defaults().withTemperature(40).withTopK(0).withTopP(1).withMinP(0)
                .withRepeatPenalty(1).withSeed(11).withMaxTokens(MAX_TOKENS);
        List<ChatMessage> messages = List.of(ChatMessage.user(QUESTION));
        String plain = reference.text(reference.generate(messages, MAX_TOKENS,
                new SamplingParams(40f, 0, 1f, 0f, 1f, 0f, 0f, 11L)));
        String penalised = reference.text(reference.generate(messages, MAX_TOKENS,
                new SamplingParams(40f, 0, 1f, 0f, 1f, 2f, 1.5f, 11L)));
        assertNotEquals(plain, penalised, "the penalties must change this sampled answer for the test to show them");

        ChatResponse response = new FsChatModel(model, hot).chat(ChatRequest.builder()
                .messages(UserMessage.from(QUESTION)).presencePenalty(2.0).frequencyPenalty(1.5).build());
        assertEquals(penalised, response.aiMessage().text());
    }

    @Test
    void whatFsCannotDoIsRefused() throws Exception {
        assertThrows(UnsupportedFeatureException.class, () -> chatModel.chat(ChatRequest.builder()
                .messages(UserMessage.from(QUESTION)).stopSequences(List.of("\n")).build()));
        assertThrows(FsException.class, () -> chatModel.chat(ChatRequest.builder()
                .messages(UserMessage.from(QUESTION), AiMessage.from("An answer.")).build()));
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        streamingModel.chat(ChatRequest.builder().messages(UserMessage.from(QUESTION)).stopSequences(List.of("x"))
                .build(), new StreamingChatResponseHandler() {
                    @Override
                    public void onCompleteResponse(ChatResponse response) {
                        done.complete(response);
                    }

                    @Override
                    public void onError(Throwable error) {
                        done.completeExceptionally(error);
                    }
                });
        Throwable error = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> done.get(60, TimeUnit.SECONDS)).getCause();
        assertInstanceOf(UnsupportedFeatureException.class, error);
    }

    @Test
    void reasoningReachesOnPartialThinkingAndTextOnPartialResponse() {
        List<String> events = new ArrayList<>();
        StreamingConsumer consumer = new StreamingConsumer(new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
                events.add("text:" + partial);
            }

            @Override
            public void onPartialThinking(PartialThinking thinking) {
                events.add("thinking:" + thinking.text());
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {}

            @Override
            public void onError(Throwable error) {}
        });
        consumer.onReasoning("Rayleigh");
        consumer.onText("Because");
        assertEquals(List.of("thinking:Rayleigh", "text:Because"), events);
    }
}
