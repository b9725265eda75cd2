package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessage;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionTool;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tool calls through the official OpenAI Java SDK, on a scripted engine that answers as Qwen3 does when it calls:
 * the calls must arrive as message.tool_calls, whole and streamed, and go back into the prompt with the tool's result
 * as the chat template renders them.
 */
class ToolCallsSdkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TEXT = "Let me check both.";
    private static final String ANSWER = TEXT + "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
            + "{\"city\": \"Paris\", \"days\": 2}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", "
            + "\"arguments\": {\"city\": \"Rome\"}}\n</tool_call>";

    private static TestServer fixture;
    private static ScriptedEngine engine;
    private static OpenAIClient client;

    @BeforeAll
    static void start() {
        fixture = TestServer.load(256);
        engine = new ScriptedEngine(fixture.tokenizer.encode(ANSWER), 0);
        fixture.serve(engine, null);
        client = OpenAIOkHttpClient.builder().baseUrl(fixture.url("/v1")).apiKey("unused").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static ChatCompletionTool weatherTool() {
        FunctionParameters parameters = FunctionParameters.builder()
                .putAdditionalProperty("type", JsonValue.from("object"))
                .putAdditionalProperty("properties", JsonValue.from(Map.of("city", Map.of("type", "string"),
                        "days", Map.of("type", "integer"))))
                .putAdditionalProperty("required", JsonValue.from(List.of("city")))
                .build();
        return ChatCompletionTool.ofFunction(ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder()
                .name("get_weather").description("The weather in a city").parameters(parameters).build()).build());
    }

    private static ChatCompletionCreateParams.Builder question() {
        return ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID).addUserMessage("Weather in Paris?")
                .addTool(weatherTool());
    }

    private static void assertTheTwoCalls(ChatCompletion completion) {
        ChatCompletion.Choice choice = completion.choices().getFirst();
        assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, choice.finishReason());
        assertEquals(TEXT, choice.message().content().orElseThrow(), "the text before the calls is the content");
        List<ChatCompletionMessageFunctionToolCall> calls = choice.message().toolCalls().orElseThrow().stream()
                .map(call -> call.asFunction()).toList();
        assertEquals(2, calls.size());
        assertEquals("get_weather", calls.get(0).function().name());
        assertEquals(json("{\"city\": \"Paris\", \"days\": 2}"), json(calls.get(0).function().arguments()));
        assertEquals(json("{\"city\": \"Rome\"}"), json(calls.get(1).function().arguments()));
        assertTrue(calls.get(0).id().startsWith("call_"), calls.get(0).id());
        assertFalse(calls.get(0).id().equals(calls.get(1).id()));
    }

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(text, e);
        }
    }

    @Test
    void theAnswersCallsAreToolCalls() {
        assertTheTwoCalls(client.chat().completions().create(question().build()));
    }

    @Test
    void streamedCallsAccumulateToTheSameCalls() {
        ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
        List<ChatCompletionChunk> chunks;
        try (StreamResponse<ChatCompletionChunk> stream =
                     client.chat().completions().createStreaming(question().build())) {
            chunks = stream.stream().toList();
        }
        chunks.forEach(accumulator::accumulate);
        assertTheTwoCalls(accumulator.chatCompletion());
        long fragments = chunks.stream().flatMap(chunk -> chunk.choices().stream())
                .flatMap(choice -> choice.delta().toolCalls().orElse(List.of()).stream())
                .filter(call -> !call.function().flatMap(f -> f.arguments()).orElse("").isEmpty()).count();
        assertTrue(fragments > 2, "the arguments grow as the model writes them: " + fragments + " fragments");
    }

    @Test
    void withoutParallelCallsOnlyTheFirstCallIsKept() {
        ChatCompletion completion = client.chat().completions().create(question().parallelToolCalls(false).build());
        List<?> calls = completion.choices().getFirst().message().toolCalls().orElseThrow();
        assertEquals(1, calls.size());
        assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, completion.choices().getFirst().finishReason());
    }

    @Test
    void toolChoiceNoneLeavesTheAnswerText() {
        ChatCompletion completion = client.chat().completions().create(question()
                .toolChoice(com.openai.models.chat.completions.ChatCompletionToolChoiceOption.Auto.NONE).build());
        ChatCompletionMessage message = completion.choices().getFirst().message();
        assertEquals(ANSWER, message.content().orElseThrow());
        assertTrue(message.toolCalls().isEmpty() || message.toolCalls().get().isEmpty());
        String prompt = fixture.tokenizer.decode(engine.prompt, false);
        assertFalse(prompt.contains("<tools>"), "with tool_choice none the model is not shown the tools");
    }

    @Test
    void callsAndResultsGoBackIntoThePromptAsTheTemplateRendersThem() {
        ChatCompletionMessage first = client.chat().completions().create(question().build()).choices().getFirst()
                .message();
        ChatCompletionMessageFunctionToolCall paris = first.toolCalls().orElseThrow().get(0).asFunction();
        ChatCompletionMessageFunctionToolCall rome = first.toolCalls().orElseThrow().get(1).asFunction();
        client.chat().completions().create(question().addMessage(first)
                .addMessage(ChatCompletionToolMessageParam.builder().toolCallId(paris.id()).content("sunny").build())
                .addMessage(ChatCompletionToolMessageParam.builder().toolCallId(rome.id()).content("rain").build())
                .build());
        JsonNode tool = JSON.valueToTree(Map.of("type", "function", "function", Map.of("name", "get_weather",
                "description", "The weather in a city", "parameters", Map.of("type", "object",
                        "properties", Map.of("city", Map.of("type", "string"), "days", Map.of("type", "integer")),
                        "required", List.of("city")))));
        List<ChatMessage> expected = List.of(ChatMessage.user("Weather in Paris?"),
                new ChatMessage("assistant", TEXT, null, List.of(
                        new ToolCall("get_weather", json("{\"city\": \"Paris\", \"days\": 2}")),
                        new ToolCall("get_weather", json("{\"city\": \"Rome\"}")))),
                ChatMessage.tool("sunny"), ChatMessage.tool("rain"));
        String prompt = fixture.tokenizer.decode(engine.prompt, false);
        String rendered = fixture.template.render(expected, List.of(tool), true, null);
        // The SDK may order the tool's keys its own way: compare the conversation after the tools block.
        assertEquals(rendered.substring(rendered.lastIndexOf("</tools>")),
                prompt.substring(prompt.lastIndexOf("</tools>")));
        assertTrue(prompt.contains("\"name\": \"get_weather\""), prompt);
    }
}
