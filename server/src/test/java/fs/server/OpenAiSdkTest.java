package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official OpenAI Java SDK against the server on models/tiny-tied with four slots: every greedy answer, alone or
 * among concurrent ones decoded in one batch, must be the text of the tokens the existing Generator picks for the same
 * prompt.
 */
class OpenAiSdkTest {
    private static final int MAX_TOKENS = 8;
    private static final String QUESTION = "Why is the sky blue?";
    private static final List<String> CONCURRENT = List.of("One", "Two words", "Three more words", "Four");
    private static final String TEXT_PROMPT = "Once upon a time";

    private static TestServer fixture;
    private static OpenAIClient client;
    private static int questionPromptTokens;
    private static String questionAnswer;
    private static final List<String> concurrentAnswers = new ArrayList<>();
    private static String textAnswer;
    private static String seededAnswer;
    private static int noThinkingPromptTokens;
    private static final long SEED = 1234;

    @BeforeAll
    static void start() {
        fixture = TestServer.load(512);
        int[] prompt = fixture.chatPrompt(QUESTION, null);
        questionPromptTokens = prompt.length;
        Generator.Generation question = fixture.greedy(prompt, MAX_TOKENS);
        assertEquals(MAX_TOKENS, question.ids().length, "the reference must run to the limit for these tests");
        questionAnswer = fixture.text(question.ids());
        for (String user : CONCURRENT) {
            concurrentAnswers.add(fixture.text(fixture.greedy(fixture.chatPrompt(user, null), MAX_TOKENS).ids()));
        }
        textAnswer = fixture.text(fixture.greedy(fixture.tokenizer.encode(TEXT_PROMPT), MAX_TOKENS).ids());
        // tiny-tied's generation_config.json: do_sample true, temperature 0.6, top_k 20, top_p 0.95.
        SamplingParams modelDefaults = new SamplingParams(0.6f, 20, 0.95f, 0f, 1f, SEED);
        seededAnswer = fixture.text(new Generator(fixture.model.sequence(), fixture.stopIds, modelDefaults)
                .generate(prompt, MAX_TOKENS, id -> {}).ids());
        noThinkingPromptTokens = fixture.chatPrompt(QUESTION, false).length;
        fixture.serve(fixture.schedulerEngine(4, 8), null); // the concurrent requests decode in one batch
        client = OpenAIOkHttpClient.builder().baseUrl(fixture.url("/v1")).apiKey("unused").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) client.close();
        if (fixture != null) fixture.close();
    }

    private static ChatCompletionCreateParams.Builder question(String user) {
        return ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID).addUserMessage(user)
                .maxCompletionTokens(MAX_TOKENS).temperature(0.0);
    }

    @Test
    void aChatAnswerIsTheGeneratorsGreedyTextWithItsUsage() {
        ChatCompletion answer = client.chat().completions().create(question(QUESTION).build());
        ChatCompletion.Choice choice = answer.choices().getFirst();
        assertEquals(questionAnswer, choice.message().content().orElseThrow());
        assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, choice.finishReason());
        assertEquals(questionPromptTokens, answer.usage().orElseThrow().promptTokens());
        assertEquals(MAX_TOKENS, answer.usage().orElseThrow().completionTokens());
        assertEquals(TestServer.MODEL_ID, answer.model());
        assertTrue(answer.id().startsWith("chatcmpl-"), answer.id());
    }

    @Test
    void aStreamedChatAnswerAddsUpToTheSameTextAndEndsWithUsage() {
        StringBuilder text = new StringBuilder();
        List<ChatCompletionChunk> chunks = new ArrayList<>();
        ChatCompletionCreateParams params = question(QUESTION)
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
            stream.stream().forEach(chunk -> {
                chunks.add(chunk);
                for (ChatCompletionChunk.Choice choice : chunk.choices()) choice.delta().content().ifPresent(text::append);
            });
        }
        assertEquals(questionAnswer, text.toString());
        assertTrue(chunks.size() >= 3, "a role chunk, text chunks, a finish chunk: " + chunks.size());
        ChatCompletionChunk last = chunks.getLast();
        assertTrue(last.choices().isEmpty(), "the usage chunk has no choices");
        assertEquals(MAX_TOKENS, last.usage().orElseThrow().completionTokens());
        ChatCompletionChunk finish = chunks.get(chunks.size() - 2);
        assertEquals(ChatCompletionChunk.Choice.FinishReason.LENGTH,
                finish.choices().getFirst().finishReason().orElseThrow());
    }

    @Test
    void aStopStringEndsTheAnswerBeforeIt() {
        // A piece from the middle of the greedy answer: the answer must end right before its first occurrence.
        String stop = questionAnswer.substring(questionAnswer.length() / 2, questionAnswer.length() / 2 + 2);
        String expected = questionAnswer.substring(0, questionAnswer.indexOf(stop));
        ChatCompletion answer = client.chat().completions().create(question(QUESTION).stop(stop).build());
        assertEquals(expected, answer.choices().getFirst().message().content().orElseThrow());
        assertEquals(ChatCompletion.Choice.FinishReason.STOP, answer.choices().getFirst().finishReason());
        assertTrue(answer.usage().orElseThrow().completionTokens() < MAX_TOKENS);

        StringBuilder streamed = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream =
                client.chat().completions().createStreaming(question(QUESTION).stop(stop).build())) {
            stream.stream().forEach(chunk -> chunk.choices()
                    .forEach(choice -> choice.delta().content().ifPresent(streamed::append)));
        }
        assertEquals(expected, streamed.toString(), "streamed, no chunk shows any of the stop string");
    }

    @Test
    void aTextCompletionIsTheGeneratorsGreedyText() {
        CompletionCreateParams params = CompletionCreateParams.builder().model(TestServer.MODEL_ID).prompt(TEXT_PROMPT)
                .maxTokens(MAX_TOKENS).temperature(0.0).build();
        Completion completion = client.completions().create(params);
        assertEquals(textAnswer, completion.choices().getFirst().text());
        assertEquals(MAX_TOKENS, completion.usage().orElseThrow().completionTokens());

        StringBuilder streamed = new StringBuilder();
        try (StreamResponse<Completion> stream = client.completions().createStreaming(params)) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(choice -> streamed.append(choice.text())));
        }
        assertEquals(textAnswer, streamed.toString());
    }

    @Test
    void withoutSamplingFieldsTheModelsDefaultsSampleFromTheSeed() {
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .addUserMessage(QUESTION).maxCompletionTokens(MAX_TOKENS).seed(SEED).build();
        String first = client.chat().completions().create(params).choices().getFirst().message().content().orElseThrow();
        assertEquals(seededAnswer, first, "generation_config.json's sampling with the request's seed");
        String again = client.chat().completions().create(params).choices().getFirst().message().content().orElseThrow();
        assertEquals(first, again, "the same seed, the same answer");
    }

    @Test
    void enableThinkingFalseReachesTheTemplate() {
        ChatCompletion answer = client.chat().completions().create(question(QUESTION)
                .putAdditionalBodyProperty("chat_template_kwargs", JsonValue.from(Map.of("enable_thinking", false)))
                .build());
        // The template then closes an empty think block in the prompt: the prompt is the one rendered with false.
        assertEquals(noThinkingPromptTokens, answer.usage().orElseThrow().promptTokens());
        assertTrue(noThinkingPromptTokens > questionPromptTokens);
    }

    @Test
    void theModelsListNamesTheServedModel() {
        List<Model> models = client.models().list().data();
        assertEquals(List.of(TestServer.MODEL_ID), models.stream().map(Model::id).toList());
    }

    @Test
    void errorsReachTheClientAsOpenAiErrors() {
        NotFoundException unknown = assertThrows(NotFoundException.class, () -> client.chat().completions()
                .create(question(QUESTION).model("gpt-4o").build()));
        assertEquals("model_not_found", unknown.code().orElseThrow());
        assertTrue(unknown.getMessage().contains("gpt-4o"), unknown.getMessage());

        BadRequestException n = assertThrows(BadRequestException.class,
                () -> client.chat().completions().create(question(QUESTION).n(2).build()));
        assertEquals("n", n.param().orElseThrow());

        BadRequestException thinking = assertThrows(BadRequestException.class, () -> client.chat().completions()
                .create(question(QUESTION).putAdditionalBodyProperty("chat_template_kwargs",
                        JsonValue.from(Map.of("enable_thinking", "no"))).build()));
        assertEquals("chat_template_kwargs.enable_thinking", thinking.param().orElseThrow());

        // The server serves on after each of them.
        assertFalse(client.chat().completions().create(question(QUESTION).build()).choices().isEmpty());
    }

    @Test
    void fourConcurrentRequestsAreAllAnsweredEachWithItsOwnGreedyText() throws Exception {
        try (ExecutorService pool = Executors.newFixedThreadPool(CONCURRENT.size())) {
            List<Future<String>> answers = new ArrayList<>();
            for (String user : CONCURRENT) {
                answers.add(pool.submit(() -> client.chat().completions().create(question(user).build())
                        .choices().getFirst().message().content().orElseThrow()));
            }
            for (int i = 0; i < CONCURRENT.size(); i++) {
                assertEquals(concurrentAnswers.get(i), answers.get(i).get(), "request " + CONCURRENT.get(i));
            }
        }
    }
}
