package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionTokenLogprob;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionChoice;
import com.openai.models.completions.CompletionCreateParams;
import fs.generate.Sampler;
import fs.generate.SamplingParams;
import fs.tokenizer.StreamingDecoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * logprobs, top_logprobs and the presence and frequency penalties through the official OpenAI Java SDK against the
 * server on models/tiny-tied. The expectations come from the model run directly before serving: log-softmax (in
 * double) of a one-sequence forward's logits, and the penalties written out from OpenAI's definition.
 */
class LogprobsAndPenaltiesSdkTest {
    private static final int MAX_TOKENS = 8;
    private static final int TOP = 3;
    private static final double TOLERANCE = 1e-3; // batched and one-sequence forwards round differently
    private static final String QUESTION = "Why is the sky blue?";
    private static final String TEXT_PROMPT = "Once upon a time";
    private static final int PENALISED_TOKENS = 12;
    private static final long SEED = 99;

    private static TestServer fixture;
    private static OpenAIClient client;
    private static int[] questionIds;
    private static double[][] questionLogprobs; // row i: the log-softmax before generated token i
    private static int[] textIds;
    private static double[][] textLogprobs;
    private static int[] greedyFrequencyIds;
    private static int[] sampledPenalisedIds;
    private static int[] sampledPlainIds;
    private static int[] textFrequencyIds;

    @BeforeAll
    static void start() {
        fixture = TestServer.load(512);
        int[] question = fixture.chatPrompt(QUESTION, null);
        questionIds = fixture.greedy(question, MAX_TOKENS).ids();
        assertEquals(MAX_TOKENS, questionIds.length, "the reference must run to the limit for these tests");
        questionLogprobs = logSoftmaxBefore(question, questionIds);
        int[] text = fixture.tokenizer.encode(TEXT_PROMPT);
        textIds = fixture.greedy(text, MAX_TOKENS).ids();
        textLogprobs = logSoftmaxBefore(text, textIds);

        greedyFrequencyIds = penalisedAnswer(question, 0f, 0f, 2f);
        // tiny-tied's generation_config.json gives top_k 20 and top_p 0.95; the request only the temperature.
        sampledPenalisedIds = penalisedAnswer(question, 40f, 1.5f, 2f);
        sampledPlainIds = penalisedAnswer(question, 40f, 0f, 0f);
        assertFalse(Arrays.equals(sampledPenalisedIds, sampledPlainIds), "the penalties matter for this test");
        textFrequencyIds = penalisedAnswer(text, 0f, 0f, 2f);

        fixture.serve(fixture.schedulerEngine(2, 8), null);
        client = OpenAIOkHttpClient.builder().baseUrl(fixture.url("/v1")).apiKey("unused").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) client.close();
        if (fixture != null) fixture.close();
    }

    /** log-softmax, in double, of the one-sequence logits before each generated token. */
    private static double[][] logSoftmaxBefore(int[] prompt, int[] generated) {
        double[][] rows = new double[generated.length][];
        for (int i = 0; i < generated.length; i++) {
            rows[i] = logSoftmax(fixture.logitsAfter(prefix(prompt, generated, i)));
        }
        return rows;
    }

    private static double[] logSoftmax(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float logit : logits) max = Math.max(max, logit);
        double sum = 0;
        for (float logit : logits) sum += Math.exp(logit - max);
        double log = max + Math.log(sum);
        double[] out = new double[logits.length];
        for (int i = 0; i < logits.length; i++) out[i] = logits[i] - log;
        return out;
    }

    private static int[] prefix(int[] prompt, int[] generated, int count) {
        int[] tokens = Arrays.copyOf(prompt, prompt.length + count);
        System.arraycopy(generated, 0, tokens, prompt.length, count);
        return tokens;
    }

    /**
     * The answer under OpenAI's penalties as defined: logit[j] -= c[j]·frequency + (c[j] > 0)·presence, c counting
     * the answer's own tokens; then greedy (temperature 0), or a draw of a penalty-free sampler with the model's
     * top-k 20 and top-p 0.95 and the request's seed. Ends at a stop token or {@link #PENALISED_TOKENS}.
     */
    private static int[] penalisedAnswer(int[] prompt, float temperature, float presence, float frequency) {
        Sampler sampler = new Sampler(temperature == 0f ? SamplingParams.greedy()
                : new SamplingParams(temperature, 20, 0.95f, 0f, 1f, SEED));
        int[] answer = new int[0];
        while (answer.length < PENALISED_TOKENS) {
            float[] logits = fixture.logitsAfter(prefix(prompt, answer, answer.length));
            int[] counts = new int[logits.length];
            for (int token : answer) counts[token]++;
            for (int j = 0; j < logits.length; j++) {
                if (counts[j] > 0) logits[j] -= counts[j] * frequency + presence;
            }
            int next = sampler.sample(logits);
            if (Arrays.stream(fixture.stopIds).anyMatch(stop -> stop == next)) break;
            answer = prefix(answer, new int[] {next}, 1);
        }
        return answer;
    }

    private static ChatCompletionCreateParams.Builder question() {
        return ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID).addUserMessage(QUESTION)
                .maxCompletionTokens(MAX_TOKENS).temperature(0.0);
    }

    /** The ids, most likely first (the lower id on ties), of a log-softmax row. */
    private static int[] ranking(double[] logprobs, int count) {
        return IntStream.range(0, logprobs.length).boxed()
                .sorted(Comparator.<Integer>comparingDouble(i -> -logprobs[i]).thenComparing(Function.identity()))
                .limit(count).mapToInt(Integer::intValue).toArray();
    }

    private static List<Long> bytesOf(int id) {
        List<Long> bytes = new ArrayList<>();
        for (byte b : fixture.tokenizer.tokenBytes(id)) bytes.add((long) (b & 0xff));
        return bytes;
    }

    /** The token text OpenAI shows: the token's own bytes read as UTF-8, lossily. */
    private static String textOf(int id) {
        return fixture.tokenizer.decode(new int[] {id}, false);
    }

    /** Checks chat logprobs entries against the greedy reference's first {@code entries.size()} tokens. */
    private static void assertQuestionEntries(List<ChatCompletionTokenLogprob> entries, int top) {
        for (int i = 0; i < entries.size(); i++) {
            ChatCompletionTokenLogprob entry = entries.get(i);
            int id = questionIds[i];
            assertEquals(textOf(id), entry.token(), "token " + i);
            assertEquals(bytesOf(id), entry.bytes().orElseThrow(), "token " + i);
            assertEquals(questionLogprobs[i][id], entry.logprob(), TOLERANCE, "token " + i);
            assertEquals(top, entry.topLogprobs().size());
            int[] expectedTop = ranking(questionLogprobs[i], top);
            double mass = 0;
            for (int k = 0; k < top; k++) {
                ChatCompletionTokenLogprob.TopLogprob alternative = entry.topLogprobs().get(k);
                assertEquals(textOf(expectedTop[k]), alternative.token(), "token " + i + " top " + k);
                assertEquals(bytesOf(expectedTop[k]), alternative.bytes().orElseThrow());
                assertEquals(questionLogprobs[i][expectedTop[k]], alternative.logprob(), TOLERANCE);
                mass += Math.exp(alternative.logprob());
            }
            assertTrue(mass <= 1 + 1e-6, "mass " + mass);
            if (top > 0) assertEquals(entry.logprob(), entry.topLogprobs().getFirst().logprob(), "greedy: the top one");
        }
    }

    @Test
    void chatLogprobsWholeAndStreamedAreTheModelsAndAgree() {
        ChatCompletion answer = client.chat().completions().create(question().logprobs(true).topLogprobs(TOP).build());
        ChatCompletion.Choice choice = answer.choices().getFirst();
        assertEquals(fixture.text(questionIds), choice.message().content().orElseThrow(), "logprobs change nothing");
        List<ChatCompletionTokenLogprob> whole = choice.logprobs().orElseThrow().content().orElseThrow();
        assertEquals(answer.usage().orElseThrow().completionTokens(), whole.size());
        assertEquals(MAX_TOKENS, whole.size());
        assertQuestionEntries(whole, TOP);

        List<ChatCompletionTokenLogprob> streamed = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions()
                .createStreaming(question().logprobs(true).topLogprobs(TOP).build())) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> {
                c.delta().content().ifPresent(text::append);
                c.logprobs().flatMap(ChatCompletionChunk.Choice.Logprobs::content).ifPresent(entries -> {
                    boolean carriesText = c.delta().content().map(s -> !s.isEmpty()).orElse(false)
                            || c.delta()._additionalProperties().containsKey("reasoning_content");
                    assertTrue(entries.isEmpty() || carriesText || c.finishReason().isPresent(),
                            "entries come with the text of their tokens, or at the end");
                    streamed.addAll(entries);
                });
            }));
        }
        assertEquals(fixture.text(questionIds), text.toString());
        assertEquals(whole.size(), streamed.size());
        for (int i = 0; i < whole.size(); i++) {
            assertEquals(whole.get(i).token(), streamed.get(i).token());
            assertEquals(whole.get(i).bytes(), streamed.get(i).bytes());
            assertEquals(whole.get(i).logprob(), streamed.get(i).logprob(), 1e-6);
            assertEquals(whole.get(i).topLogprobs().size(), streamed.get(i).topLogprobs().size());
        }

        // logprobs alone: the chosen tokens, no alternatives; not asked: null, as before.
        ChatCompletion chosenOnly = client.chat().completions().create(question().logprobs(true).build());
        assertQuestionEntries(chosenOnly.choices().getFirst().logprobs().orElseThrow().content().orElseThrow(), 0);
        assertTrue(client.chat().completions().create(question().build()).choices().getFirst().logprobs().isEmpty());
    }

    @Test
    void aStopStringCutsTheLogprobsWhereItCutsTheCount() {
        String answerText = fixture.text(questionIds);
        String stop = answerText.substring(answerText.length() / 2, answerText.length() / 2 + 2);
        ChatCompletion answer = client.chat().completions()
                .create(question().logprobs(true).topLogprobs(1).stop(stop).build());
        long counted = answer.usage().orElseThrow().completionTokens();
        assertTrue(counted < MAX_TOKENS);
        List<ChatCompletionTokenLogprob> whole =
                answer.choices().getFirst().logprobs().orElseThrow().content().orElseThrow();
        assertEquals(counted, whole.size());
        assertQuestionEntries(whole, 1);

        List<ChatCompletionTokenLogprob> streamed = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions()
                .createStreaming(question().logprobs(true).topLogprobs(1).stop(stop).build())) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.logprobs()
                    .flatMap(ChatCompletionChunk.Choice.Logprobs::content).ifPresent(streamed::addAll)));
        }
        assertEquals(counted, streamed.size(), "streamed, the held-back and cut tokens are reported as counted");
        assertQuestionEntries(streamed, 1);
    }

    @Test
    void legacyCompletionLogprobsHaveOpenAisShape() {
        CompletionCreateParams params = CompletionCreateParams.builder().model(TestServer.MODEL_ID).prompt(TEXT_PROMPT)
                .maxTokens(MAX_TOKENS).temperature(0.0).logprobs(TOP).build();
        Completion completion = client.completions().create(params);
        CompletionChoice choice = completion.choices().getFirst();
        assertEquals(fixture.text(textIds), choice.text());
        CompletionChoice.Logprobs logprobs = choice.logprobs().orElseThrow();
        List<String> tokens = logprobs.tokens().orElseThrow();
        List<Double> tokenLogprobs = logprobs.tokenLogprobs().orElseThrow();
        List<Long> offsets = logprobs.textOffset().orElseThrow();
        List<CompletionChoice.Logprobs.TopLogprob> tops = logprobs.topLogprobs().orElseThrow();
        assertEquals(MAX_TOKENS, tokens.size());
        assertEquals(MAX_TOKENS, tokenLogprobs.size());
        assertEquals(MAX_TOKENS, offsets.size());
        assertEquals(MAX_TOKENS, tops.size());
        // Offsets: where each token's text starts in the completion text, in code points.
        StreamingDecoder decoder = fixture.tokenizer.streamingDecoder(true);
        int offset = 0;
        for (int i = 0; i < MAX_TOKENS; i++) {
            int id = textIds[i];
            assertEquals(textOf(id), tokens.get(i));
            assertEquals(textLogprobs[i][id], tokenLogprobs.get(i), TOLERANCE);
            assertEquals(offset, offsets.get(i).intValue(), "token " + i);
            String piece = decoder.push(id);
            offset += piece.codePointCount(0, piece.length());

            Map<String, JsonValue> top = tops.get(i)._additionalProperties();
            assertTrue(top.size() >= 1 && top.size() <= TOP + 1, "the top 3 and the chosen one: " + top);
            int[] expectedTop = ranking(textLogprobs[i], TOP);
            for (int k = 0; k < TOP; k++) {
                JsonValue value = top.get(textOf(expectedTop[k]));
                assertTrue(value != null, "top " + k + " in " + top);
                double logprob = value.convert(Double.class);
                assertTrue(logprob >= textLogprobs[i][expectedTop[k]] - TOLERANCE, "the likelier of a shared text");
            }
            assertEquals(tokenLogprobs.get(i), top.get(tokens.get(i)).convert(Double.class), "greedy: the top one");
        }

        List<String> streamedTokens = new ArrayList<>();
        List<Long> streamedOffsets = new ArrayList<>();
        try (StreamResponse<Completion> stream = client.completions().createStreaming(params)) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.logprobs().ifPresent(l -> {
                streamedTokens.addAll(l.tokens().orElseThrow());
                streamedOffsets.addAll(l.textOffset().orElseThrow());
            })));
        }
        assertEquals(tokens, streamedTokens);
        assertEquals(offsets, streamedOffsets);
        assertTrue(client.completions().create(CompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .prompt(TEXT_PROMPT).maxTokens(2).build()).choices().getFirst().logprobs().isEmpty());
    }

    @Test
    void penaltiesChangeTheAnswerAsTheirDefinitionSays() {
        ChatCompletion greedy = client.chat().completions().create(question().maxCompletionTokens(PENALISED_TOKENS)
                .frequencyPenalty(2.0).build());
        assertEquals(fixture.text(greedyFrequencyIds), greedy.choices().getFirst().message().content().orElseThrow());

        ChatCompletionCreateParams.Builder sampled = ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .addUserMessage(QUESTION).maxCompletionTokens(PENALISED_TOKENS).temperature(40.0).seed(SEED);
        String penalised = client.chat().completions().create(sampled.presencePenalty(1.5).frequencyPenalty(2.0)
                .build()).choices().getFirst().message().content().orElseThrow();
        assertEquals(fixture.text(sampledPenalisedIds), penalised);
        String plain = client.chat().completions().create(sampled.presencePenalty(0.0).frequencyPenalty(0.0).build())
                .choices().getFirst().message().content().orElseThrow();
        assertEquals(fixture.text(sampledPlainIds), plain);
        assertNotEquals(plain, penalised);

        Completion text = client.completions().create(CompletionCreateParams.builder().model(TestServer.MODEL_ID)
                .prompt(TEXT_PROMPT).maxTokens(PENALISED_TOKENS).temperature(0.0).frequencyPenalty(2.0).build());
        assertEquals(fixture.text(textFrequencyIds), text.choices().getFirst().text());
    }

    @Test
    void badValuesAreOpenAiErrorsNamingTheField() {
        BadRequestException tooMany = assertThrows(BadRequestException.class, () -> client.chat().completions()
                .create(question().logprobs(true).topLogprobs(21).build()));
        assertEquals("top_logprobs", tooMany.param().orElseThrow());
        assertEquals("invalid_value", tooMany.code().orElseThrow());
        BadRequestException without = assertThrows(BadRequestException.class, () -> client.chat().completions()
                .create(question().topLogprobs(2).build()));
        assertEquals("top_logprobs", without.param().orElseThrow());
        BadRequestException presence = assertThrows(BadRequestException.class, () -> client.chat().completions()
                .create(question().presencePenalty(3.0).build()));
        assertEquals("presence_penalty", presence.param().orElseThrow());
        assertTrue(presence.getMessage().contains("[-2, 2]"), presence.getMessage());
        BadRequestException frequency = assertThrows(BadRequestException.class, () -> client.chat().completions()
                .create(question().frequencyPenalty(-2.5).build()));
        assertEquals("frequency_penalty", frequency.param().orElseThrow());
        BadRequestException legacy = assertThrows(BadRequestException.class, () -> client.completions().create(
                CompletionCreateParams.builder().model(TestServer.MODEL_ID).prompt(TEXT_PROMPT).logprobs(21).build()));
        assertEquals("logprobs", legacy.param().orElseThrow());
        // The server serves on.
        assertFalse(client.chat().completions().create(question().build()).choices().isEmpty());
    }
}
