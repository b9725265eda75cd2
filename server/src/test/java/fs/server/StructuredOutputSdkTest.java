package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ResponseFormatJsonObject;
import com.openai.models.ResponseFormatJsonSchema;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionTool;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Structured output and tool calls constrained by grammars, through the official OpenAI Java SDK, against the
 * server on models/tiny-tied: a random model, which left to itself never writes JSON, let alone a call, so whatever
 * valid JSON comes back is the constraint's doing. Each answer is checked against its schema by an independent
 * validator (networknt's).
 */
class StructuredOutputSdkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_TOKENS = 300; // the schemas bound every string, number and run of whitespace
    private static final Map<String, Object> PERSON = Map.of("type", "object",
            "properties", Map.of("name", Map.of("type", "string", "maxLength", 12),
                    "age", Map.of("type", "integer"),
                    "pets", Map.of("type", "array", "items", Map.of("enum", List.of("cat", "dog")), "maxItems", 3)),
            "required", List.of("name", "age", "pets"));
    private static final Map<String, Object> WEATHER = Map.of("type", "object",
            "properties", Map.of("city", Map.of("type", "string", "maxLength", 12),
                    "unit", Map.of("enum", List.of("celsius", "fahrenheit"))),
            "required", List.of("city", "unit"));
    private static final Map<String, Object> TIME = Map.of("type", "object",
            "properties", Map.of("zone", Map.of("type", "string", "maxLength", 8)), "required", List.of("zone"));

    private static TestServer fixture;
    private static OpenAIClient client;

    @BeforeAll
    static void start() {
        fixture = TestServer.load(1024);
        fixture.serve(fixture.schedulerEngine(2, 8), null);
        client = OpenAIOkHttpClient.builder().baseUrl(fixture.url("/v1")).apiKey("unused").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    /** A question to tiny-tied, thinking off (so that the constrained shape starts with the first token). */
    private static ChatCompletionCreateParams.Builder question(String user) {
        return ChatCompletionCreateParams.builder().model(TestServer.MODEL_ID).addUserMessage(user)
                .maxCompletionTokens(MAX_TOKENS).temperature(0.8).seed(7)
                .putAdditionalBodyProperty("chat_template_kwargs", JsonValue.from(Map.of("enable_thinking", false)));
    }

    private static Schema schema(Map<String, Object> schema) {
        try {
            return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                    .getSchema(JSON.writeValueAsString(schema));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void assertValid(Map<String, Object> schema, String json) {
        try {
            assertEquals(List.of(), schema(schema).validate(json, InputFormat.JSON), json);
        } catch (RuntimeException e) {
            throw new AssertionError("not JSON: " + json, e);
        }
    }

    private static ResponseFormatJsonSchema personFormat() {
        var schema = ResponseFormatJsonSchema.JsonSchema.Schema.builder();
        PERSON.forEach((key, value) -> schema.putAdditionalProperty(key, JsonValue.from(value)));
        return ResponseFormatJsonSchema.builder().jsonSchema(ResponseFormatJsonSchema.JsonSchema.builder()
                .name("person").strict(true).schema(schema.build()).build()).build();
    }

    private static ChatCompletionTool tool(String name, Map<String, Object> parameters) {
        FunctionParameters.Builder schema = FunctionParameters.builder();
        parameters.forEach((key, value) -> schema.putAdditionalProperty(key, JsonValue.from(value)));
        return ChatCompletionTool.ofFunction(ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder()
                .name(name).description("Looks up " + name).parameters(schema.build()).build()).build());
    }

    private static ChatCompletion streamed(ChatCompletionCreateParams params) {
        ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
            stream.stream().forEach(accumulator::accumulate);
        }
        return accumulator.chatCompletion();
    }

    @Test
    void aJsonSchemaAnswerFollowsTheSchemaWholeAndStreamed() {
        ChatCompletionCreateParams params = question("Describe a person.").responseFormat(personFormat()).build();
        for (ChatCompletion completion : List.of(client.chat().completions().create(params), streamed(params))) {
            ChatCompletion.Choice choice = completion.choices().getFirst();
            assertEquals(ChatCompletion.Choice.FinishReason.STOP, choice.finishReason(), "the grammar ended it");
            assertValid(PERSON, choice.message().content().orElseThrow());
        }
    }

    @Test
    void jsonModeAnswersAJsonObject() {
        ChatCompletion completion = client.chat().completions().create(question("Any JSON.")
                .responseFormat(ResponseFormatJsonObject.builder().build()).maxCompletionTokens(60).build());
        String content = completion.choices().getFirst().message().content().orElseThrow();
        assertTrue(content.startsWith("{"), content);
        if (completion.choices().getFirst().finishReason() == ChatCompletion.Choice.FinishReason.STOP) {
            assertValid(Map.of("type", "object"), content);
        }
    }

    @Test
    void aGrammarHoldsTheAnswer() {
        ChatCompletion completion = client.chat().completions().create(question("Yes or no?")
                .putAdditionalBodyProperty("grammar", JsonValue.from("root ::= (\"yes\" | \"no\") \"!\"")).build());
        String content = completion.choices().getFirst().message().content().orElseThrow();
        assertTrue(content.equals("yes!") || content.equals("no!"), content);
    }

    @Test
    void requiredToolChoiceGivesACallWithValidArgumentsWholeAndStreamed() {
        // One call: with parallel calls allowed a random model may go on calling until the token limit.
        ChatCompletionCreateParams params = question("Weather or time in Paris?")
                .addTool(tool("get_weather", WEATHER)).addTool(tool("get_time", TIME)).parallelToolCalls(false)
                .toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED).build();
        for (ChatCompletion completion : List.of(client.chat().completions().create(params), streamed(params))) {
            ChatCompletion.Choice choice = completion.choices().getFirst();
            assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, choice.finishReason());
            assertTrue(choice.message().content().orElse("").isEmpty(), "nothing but the call");
            List<ChatCompletionMessageFunctionToolCall> calls = choice.message().toolCalls().orElseThrow().stream()
                    .map(call -> call.asFunction()).toList();
            assertEquals(1, calls.size());
            String name = calls.getFirst().function().name();
            assertTrue(name.equals("get_weather") || name.equals("get_time"), name);
            assertValid(name.equals("get_weather") ? WEATHER : TIME, calls.getFirst().function().arguments());
        }
    }

    @Test
    void parallelCallsOfANamedFunctionAreEachValid() {
        ChatCompletion completion = client.chat().completions().create(question("Time?")
                .addTool(tool("get_weather", WEATHER)).addTool(tool("get_time", TIME))
                .toolChoice(com.openai.models.chat.completions.ChatCompletionNamedToolChoice.builder()
                        .function(com.openai.models.chat.completions.ChatCompletionNamedToolChoice.Function.builder()
                                .name("get_time").build()).build()).build());
        ChatCompletion.Choice choice = completion.choices().getFirst();
        List<ChatCompletionMessageFunctionToolCall> calls = choice.message().toolCalls().orElseThrow().stream()
                .map(call -> call.asFunction()).toList();
        assertFalse(calls.isEmpty());
        // A random model may go on calling until the token limit, which can cut the last call short.
        boolean cut = ChatCompletion.Choice.FinishReason.LENGTH.equals(choice.finishReason());
        for (ChatCompletionMessageFunctionToolCall call : cut ? calls.subList(0, calls.size() - 1) : calls) {
            assertEquals("get_time", call.function().name());
            assertValid(TIME, call.function().arguments());
        }
    }

    @Test
    void autoWithAModelThatNeverCallsIsAPlainAnswer() {
        ChatCompletion completion = client.chat().completions().create(question("Hello")
                .addTool(tool("get_weather", WEATHER)).maxCompletionTokens(12).temperature(0.0).build());
        ChatCompletion.Choice choice = completion.choices().getFirst();
        assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, choice.finishReason());
        assertTrue(choice.message().toolCalls().isEmpty() || choice.message().toolCalls().get().isEmpty());
        assertFalse(choice.message().content().orElseThrow().isEmpty());
    }

    private static BadRequestException refused(ChatCompletionCreateParams.Builder params) {
        return assertThrows(BadRequestException.class, () -> client.chat().completions().create(params.build()));
    }

    @Test
    void unusableSchemasAndGrammarsAre400sNamingTheField() {
        ResponseFormatJsonSchema.JsonSchema.Schema pattern = ResponseFormatJsonSchema.JsonSchema.Schema.builder()
                .putAdditionalProperty("type", JsonValue.from("string"))
                .putAdditionalProperty("pattern", JsonValue.from("^a+$")).build();
        BadRequestException schema = refused(question("x").responseFormat(ResponseFormatJsonSchema.builder()
                .jsonSchema(ResponseFormatJsonSchema.JsonSchema.builder().name("s").schema(pattern).build()).build()));
        assertEquals("response_format.json_schema.schema", schema.param().orElseThrow());
        assertTrue(schema.getMessage().contains("pattern"), schema.getMessage());

        BadRequestException grammar = refused(question("x")
                .putAdditionalBodyProperty("grammar", JsonValue.from("root ::= undefined-rule")));
        assertEquals("grammar", grammar.param().orElseThrow());

        BadRequestException parameters = refused(question("x").addTool(tool("f", Map.of("type", "object",
                "properties", Map.of("n", Map.of("type", "integer", "multipleOf", 3))))));
        assertEquals("tools[0].function.parameters", parameters.param().orElseThrow());
        assertTrue(parameters.getMessage().contains("multipleOf"), parameters.getMessage());

        BadRequestException unknown = refused(question("x").addTool(tool("f", TIME))
                .toolChoice(com.openai.models.chat.completions.ChatCompletionNamedToolChoice.builder()
                        .function(com.openai.models.chat.completions.ChatCompletionNamedToolChoice.Function.builder()
                                .name("g").build()).build()));
        assertEquals("tool_choice.function.name", unknown.param().orElseThrow());

        BadRequestException withoutTools = refused(question("x")
                .toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED));
        assertEquals("tool_choice", withoutTools.param().orElseThrow());
    }
}
