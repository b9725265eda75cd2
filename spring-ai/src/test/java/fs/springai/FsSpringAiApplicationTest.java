package fs.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import fs.api.GreedyReference;
import fs.api.ToolChoice;
import fs.chat.ChatMessage;
import fs.generate.Generator;
import fs.generate.StopReason;
import fs.model.Golden;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.ToolCallingAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisorChain;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisor;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisorChain;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingOptions;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import reactor.core.publisher.Flux;

/**
 * A Spring Boot application on fs, as an application has it: {@link FsAutoConfiguration} loads models/tiny-tied and
 * models/tiny-embed from {@code fs.*} properties, Spring AI's own auto-configuration builds ChatClient over the chat
 * model, and the test talks to both as an application would. tiny-tied has random weights and would never call a tool
 * or write JSON by itself: the calls and the JSON are the grammar's doing, and ChatClient runs an {@code @Tool}
 * method between them.
 */
@SpringBootTest(properties = {"fs.model=${fs.repo}/models/tiny-tied", "fs.embedding-model=${fs.repo}/models/tiny-embed",
        "fs.backend=java", "fs.threads=2", "fs.context-length=2048", "fs.temperature=0", "fs.max-tokens=12",
        "spring.main.banner-mode=off",
        "logging.level.root=warn"})
class FsSpringAiApplicationTest {
    private static final String QUESTION = "Why is the sky blue?";
    /** fs.max-tokens. */
    private static final int MAX_TOKENS = 12;
    /** The logit goldens' tolerance, for an entry of a unit vector. */
    private static final double TOLERANCE = 1e-3;

    @SpringBootApplication
    static class Application {}

    @Autowired
    private ChatClient.Builder chatClients;
    @Autowired
    private ChatModel chatModel;
    @Autowired
    private EmbeddingModel embeddingModel;

    private static GreedyReference reference;

    @BeforeAll
    static void loadReference() {
        reference = new GreedyReference(512);
    }

    @AfterAll
    static void closeReference() {
        if (reference != null) reference.close();
    }

    enum City { PARIS, ROME, OSLO }

    enum Sky { CLEAR, CLOUDY, RAINY }

    /** What the application wants back: bounded fields (enums), so that a random model's JSON ends. */
    record Forecast(City city, Sky sky) {}

    /** A tool whose calls are recorded. */
    static final class WeatherTool {
        final List<City> asked = Collections.synchronizedList(new ArrayList<>());

        @Tool(description = "The weather in a city")
        public String weather(@ToolParam(description = "the city") City city) {
            asked.add(city);
            return "sunny in " + city;
        }
    }

    /**
     * Inside ChatClient's tool calling loop (ordered after its advisor), the answer to the user's message must call
     * the tools (a random model would not) and the answer to their results may not (so that the output schema, which
     * fs cannot combine with tools the model may call, holds it); records each prompt the model gets.
     */
    static final class FirstAnswerCalls implements CallAdvisor, StreamAdvisor {
        final List<Prompt> prompts = Collections.synchronizedList(new ArrayList<>());

        @Override
        public ChatClientResponse adviseCall(ChatClientRequest request, CallAdvisorChain chain) {
            return chain.nextCall(withToolChoice(request));
        }

        @Override
        public Flux<ChatClientResponse> adviseStream(ChatClientRequest request, StreamAdvisorChain chain) {
            return chain.nextStream(withToolChoice(request));
        }

        private ChatClientRequest withToolChoice(ChatClientRequest request) {
            boolean toUser = request.prompt().getInstructions().getLast() instanceof UserMessage;
            FsChatOptions options = ((FsChatOptions) request.prompt().getOptions()).mutate()
                    .toolChoice(toUser ? ToolChoice.REQUIRED : ToolChoice.NONE).build();
            Prompt prompt = request.prompt().mutate().chatOptions(options).build();
            prompts.add(prompt);
            return request.mutate().prompt(prompt).build();
        }

        @Override
        public String getName() {
            return "first answer calls";
        }

        @Override
        public int getOrder() {
            return ToolCallingAdvisor.DEFAULT_ORDER + 1;
        }
    }

    @Test
    void chatClientCallsAToolAndGetsATypedRecordBack() {
        WeatherTool tool = new WeatherTool();
        FirstAnswerCalls firstAnswerCalls = new FirstAnswerCalls();
        Forecast forecast = chatClients.build().prompt().user("What is the weather in Paris?")
                .options(FsChatOptions.builder().temperature(0.7).seed(11L).maxTokens(200).thinking(false))
                .tools(tool).advisors(firstAnswerCalls)
                .call().entity(Forecast.class);

        assertFalse(tool.asked.isEmpty(), "the tool was called");
        Prompt afterTools = firstAnswerCalls.prompts.getLast();
        List<ToolResponseMessage.ToolResponse> results = afterTools.getInstructions().stream()
                .filter(m -> m instanceof ToolResponseMessage).flatMap(m -> ((ToolResponseMessage) m)
                        .getResponses().stream()).toList();
        assertEquals(tool.asked.size(), results.size());
        assertTrue(results.getFirst().responseData().contains("sunny in " + tool.asked.getFirst()),
                "the tool's result went back to the model: " + results.getFirst().responseData());
        assertNotNull(forecast, "the answer after the results is the record's JSON");
        assertNotNull(forecast.city());
        assertNotNull(forecast.sky());
    }

    @Test
    void aStreamedAnswerCallsAToolToo() {
        WeatherTool tool = new WeatherTool();
        FirstAnswerCalls firstAnswerCalls = new FirstAnswerCalls();
        List<String> pieces = chatClients.build().prompt().user("What is the weather in Rome?")
                .options(FsChatOptions.builder().temperature(0.7).seed(11L).maxTokens(200).thinking(false))
                .tools(tool).advisors(firstAnswerCalls).stream().content().collectList()
                .block(Duration.ofSeconds(60));
        assertFalse(tool.asked.isEmpty(), "the tool was called");
        assertEquals(2, firstAnswerCalls.prompts.size(), "the question, then the results");
        assertTrue(firstAnswerCalls.prompts.getLast().getInstructions().getLast() instanceof ToolResponseMessage);
        assertNotNull(pieces);
        assertFalse(String.join("", pieces).isEmpty(), "the answer after the results streamed");
    }

    @Test
    void theStreamsPiecesMakeTheGreedyAnswer() {
        List<ChatMessage> messages = List.of(ChatMessage.user(QUESTION));
        Generator.Generation want = reference.generate(messages, MAX_TOKENS);
        ChatClient chatClient = chatClients.build(); // greedy, MAX_TOKENS: the properties say so

        List<ChatResponse> pieces = chatClient.prompt().user(QUESTION).stream().chatResponse()
                .collectList().block(Duration.ofSeconds(60));
        assertNotNull(pieces);
        String streamed = pieces.stream().map(r -> r.getResult().getOutput().getText()).collect(Collectors.joining());
        assertEquals(reference.text(want), streamed);
        assertTrue(pieces.size() > 2, "the answer came in pieces: " + pieces.size());

        ChatResponse whole = chatClient.prompt().user(QUESTION).call().chatResponse();
        assertNotNull(whole);
        assertEquals(reference.text(want), whole.getResult().getOutput().getText());
        String finishReason = want.stopReason() == StopReason.END_OF_SEQUENCE ? "STOP" : "LENGTH";
        assertEquals(finishReason, whole.getResult().getMetadata().getFinishReason());
        assertEquals(reference.prompt(messages).length, whole.getMetadata().getUsage().getPromptTokens());
        assertEquals(want.ids().length, whole.getMetadata().getUsage().getCompletionTokens());
        ChatResponse last = pieces.getLast();
        assertEquals(finishReason, last.getResult().getMetadata().getFinishReason(), "the last piece ends it");
        assertEquals(want.ids().length, last.getMetadata().getUsage().getCompletionTokens());
    }

    @Test
    void aWholeConversationGoesThroughTheTemplate() {
        List<ChatMessage> messages = List.of(ChatMessage.system("Be brief."), ChatMessage.user("Hi"),
                ChatMessage.assistant("Hello!"), ChatMessage.user(QUESTION));
        // Spring AI's convenience method: a prompt without options, answered with the properties' (greedy).
        assertEquals(reference.text(reference.generate(messages, MAX_TOKENS)), chatModel.call(
                new SystemMessage("Be brief."), new UserMessage("Hi"), new AssistantMessage("Hello!"),
                new UserMessage(QUESTION)));
    }

    @Test
    void whatFsCannotDoIsRefused() {
        Prompt withStop = new Prompt(QUESTION, FsChatOptions.builder().stopSequences(List.of("\n")).build());
        assertEquals("fs does not support stop sequences",
                assertThrows(FsException.class, () -> chatModel.call(withStop)).getMessage());
        assertEquals("fs does not support stop sequences", assertThrows(FsException.class,
                () -> chatModel.stream(withStop).blockLast(Duration.ofSeconds(60))).getMessage(),
                "the stream ends with the error");
        Prompt systemLate = new Prompt(List.of(new UserMessage("Hi"), new SystemMessage("Be brief.")));
        assertEquals("a system message must come first, before the user's",
                assertThrows(FsException.class, () -> chatModel.call(systemLate)).getMessage());
    }

    @Test
    void theModelReturnsToolCallsAndRunsNone() throws IOException {
        WeatherTool tool = new WeatherTool();
        var callbacks = org.springframework.ai.support.ToolCallbacks.from(tool);
        ChatResponse response = chatModel.call(new Prompt(QUESTION, FsChatOptions.builder().temperature(0.7)
                .seed(5L).maxTokens(200).thinking(false).toolCallbacks(callbacks).toolChoice(ToolChoice.REQUIRED)
                .build()));
        assertEquals("TOOL_CALLS", response.getResult().getMetadata().getFinishReason());
        assertTrue(response.hasToolCalls());
        for (var call : response.getResult().getOutput().getToolCalls()) {
            assertEquals("weather", call.name());
            JsonNode arguments = new ObjectMapper().readTree(call.arguments());
            assertTrue(arguments.path("city").isTextual() && arguments.size() == 1, call.arguments());
        }
        assertTrue(tool.asked.isEmpty(), "the model runs no tool: ChatClient's advisor does");
    }

    @Test
    void theEmbeddingModelEmbedsAsTheReference() throws IOException {
        JsonNode golden = new ObjectMapper().readTree(Golden.modelDir("tiny-embed").resolve("golden")
                .resolve("embedding.json").toFile());
        List<JsonNode> documents = new ArrayList<>();
        golden.get("cases").forEach(c -> {
            if (c.get("kind").asText().equals("document")) documents.add(c);
        });
        JsonNode first = documents.getFirst();
        assertVector(first.get("vector"), embeddingModel.embed(first.get("text").asText()), "one text");
        assertEquals(first.get("vector").size(), embeddingModel.dimensions());
        assertInstanceOf(FsEmbeddingModel.class, embeddingModel);

        // All of them in one request, each cut to the golden's dimensions (Matryoshka's, normalized again).
        int dimensions = golden.get("dimensions").asInt();
        EmbeddingResponse response = embeddingModel.call(new EmbeddingRequest(documents.stream()
                .map(d -> d.get("text").asText()).toList(), EmbeddingOptions.builder().dimensions(dimensions).build()));
        assertEquals(documents.size(), response.getResults().size());
        int tokens = 0;
        for (int i = 0; i < documents.size(); i++) {
            assertEquals(i, response.getResults().get(i).getIndex());
            assertVector(documents.get(i).get("truncated"), response.getResults().get(i).getOutput(), "document " + i);
            tokens += documents.get(i).get("ids").size();
        }
        assertEquals(tokens, response.getMetadata().getUsage().getPromptTokens(), "the tokens the model ran");
    }

    private static void assertVector(JsonNode expected, float[] actual, String what) {
        assertEquals(expected.size(), actual.length, what + ": dimensions");
        for (int i = 0; i < actual.length; i++) {
            assertEquals(expected.get(i).doubleValue(), actual[i], TOLERANCE, what + ", entry " + i);
        }
    }
}
