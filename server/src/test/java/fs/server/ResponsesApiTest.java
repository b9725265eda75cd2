package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.Reasoning;
import com.openai.models.ReasoningEffort;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.ToolChoiceFunction;
import fs.chat.ChatMessage;
import fs.chat.ChatPrompt;
import fs.chat.ToolCall;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * OpenAI's Responses API ({@code POST /v1/responses}) against the server on models/tiny-tied, through the official
 * clients: openai-java 4.8.0 (the server's test dependency; every response and event it parses is validated, which
 * checks the fields it requires) and the openai npm client 6.49.0 (server/src/test/node/responses-client.mjs, run once
 * by {@link NodeClient}); bad input over raw HTTP. Every greedy answer must be the text of the tokens the existing
 * Generator picks for the same prompt.
 */
class ResponsesApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_TOKENS = 8;
    private static final String QUESTION = "Why is the sky blue?";
    private static final String INSTRUCTIONS = "Answer in one word.";
    private static final String WEATHER = "Weather in Paris?";
    /** The tool as the Responses API writes it; its schema allows one call only: {"city": "Paris"}. */
    private static final String TOOL = "{\"type\":\"function\",\"name\":\"get_weather\",\"description\":\"The weather "
            + "in a city\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\","
            + "\"enum\":[\"Paris\"]}},\"required\":[\"city\"],\"additionalProperties\":false},\"strict\":true}";

    private static TestServer fixture;
    private static OpenAIClient client;
    private static final HttpClient http = HttpClient.newHttpClient();
    private static int questionPromptTokens;
    private static String questionAnswer;
    private static String afterCallAnswer;
    private static JsonNode node; // what the npm client's script printed

    @BeforeAll
    static void start() throws Exception {
        fixture = TestServer.load(512);
        ChatPrompt prompts = new ChatPrompt(fixture.template, fixture.tokenizer);
        int[] question = prompts.nextTurn(INSTRUCTIONS, List.of(ChatMessage.user(QUESTION)), List.of(), null);
        questionPromptTokens = question.length;
        int[] answer = fixture.greedy(question, MAX_TOKENS).ids();
        assertEquals(MAX_TOKENS, answer.length, "the reference must run to the limit for these tests");
        questionAnswer = fixture.text(answer);
        // After the call and its output, with the tool shown to the model as Chat Completions writes it.
        ObjectNode tool = (ObjectNode) JSON.readTree(TOOL);
        ObjectNode chatTool = JSON.createObjectNode().put("type", "function");
        chatTool.putObject("function").put("name", tool.get("name").textValue())
                .put("description", tool.get("description").textValue()).set("parameters", tool.get("parameters"));
        List<ChatMessage> afterCall = List.of(ChatMessage.user(WEATHER),
                new ChatMessage("assistant", "", null, List.of(new ToolCall("get_weather",
                        JSON.readTree("{\"city\": \"Paris\"}")))),
                ChatMessage.tool("sunny"));
        afterCallAnswer = fixture.text(fixture.greedy(prompts.nextTurn(null, afterCall, List.of(chatTool), false),
                MAX_TOKENS).ids());
        assertFalse(afterCallAnswer.contains("<tool_call>"), "the reference must be text, not a call");
        fixture.serve(fixture.schedulerEngine(2, 8), null);
        client = OpenAIOkHttpClient.builder().baseUrl(fixture.url("/v1")).apiKey("unused").maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) client.close();
        if (fixture != null) fixture.close();
    }

    /** The npm client's results (openai 6.49.0, the pinned version), from one run of its script. */
    private static synchronized JsonNode node() throws Exception {
        if (node == null) {
            node = JSON.readTree(NodeClient.run("responses-client.mjs", fixture.url("/v1"), TestServer.MODEL_ID,
                    QUESTION, INSTRUCTIONS, TOOL, String.valueOf(MAX_TOKENS)));
        }
        return node;
    }

    private static ResponseCreateParams.Builder question() {
        return ResponseCreateParams.builder().model(TestServer.MODEL_ID).instructions(INSTRUCTIONS).input(QUESTION)
                .maxOutputTokens(MAX_TOKENS).temperature(0.0);
    }

    private static String outputText(Response response) {
        return response.output().stream().flatMap(item -> item.message().stream())
                .flatMap(message -> message.content().stream())
                .flatMap(content -> content.outputText().stream())
                .map(text -> text.text()).collect(Collectors.joining());
    }

    // openai-java 4.8.0

    @Test
    void aResponseIsTheGreedyTextCutAtMaxOutputTokens() {
        Response response = client.responses().create(question().build()).validate();
        assertEquals(questionAnswer, outputText(response));
        assertEquals(ResponseStatus.INCOMPLETE, response.status().orElseThrow());
        assertEquals(Response.IncompleteDetails.Reason.MAX_OUTPUT_TOKENS,
                response.incompleteDetails().orElseThrow().reason().orElseThrow());
        assertEquals(questionPromptTokens, response.usage().orElseThrow().inputTokens());
        assertEquals(MAX_TOKENS, response.usage().orElseThrow().outputTokens());
        assertEquals(TestServer.MODEL_ID, response.model().asString());
        assertTrue(response.id().startsWith("resp_"), response.id());
        assertEquals(INSTRUCTIONS, response.instructions().orElseThrow().asString());
    }

    @Test
    void aStreamedResponseAccumulatesToTheSameText() {
        ResponseAccumulator accumulator = ResponseAccumulator.create();
        StringBuilder deltas = new StringBuilder();
        List<Long> sequence = new ArrayList<>();
        try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(question().build())) {
            stream.stream().forEach(event -> {
                event.validate();
                accumulator.accumulate(event);
                event.outputTextDelta().ifPresent(delta -> {
                    deltas.append(delta.delta());
                    sequence.add(delta.sequenceNumber());
                });
            });
        }
        assertEquals(questionAnswer, deltas.toString());
        Response response = accumulator.response().validate();
        assertEquals(questionAnswer, outputText(response));
        assertEquals(ResponseStatus.INCOMPLETE, response.status().orElseThrow());
        for (int i = 1; i < sequence.size(); i++) assertTrue(sequence.get(i) > sequence.get(i - 1), "" + sequence);
    }

    /** Asks for the one call the tool's schema allows, thinking off; the answer ends with that call. */
    private static ResponseCreateParams weatherCall() throws IOException {
        ObjectNode tool = (ObjectNode) JSON.readTree(TOOL);
        FunctionTool.Parameters.Builder parameters = FunctionTool.Parameters.builder();
        tool.get("parameters").properties().forEach(field ->
                parameters.putAdditionalProperty(field.getKey(), JsonValue.fromJsonNode(field.getValue())));
        return ResponseCreateParams.builder().model(TestServer.MODEL_ID).input(WEATHER)
                .addTool(FunctionTool.builder().name("get_weather").parameters(parameters.build()).strict(true).build())
                .toolChoice(ToolChoiceFunction.builder().name("get_weather").build()).parallelToolCalls(false)
                .reasoning(Reasoning.builder().effort(ReasoningEffort.MINIMAL).build())
                .maxOutputTokens(40).temperature(0.0).build();
    }

    private static void assertTheWeatherCall(Response response) throws IOException {
        List<ResponseFunctionToolCall> calls =
                response.output().stream().flatMap(item -> item.functionCall().stream()).toList();
        assertEquals(1, calls.size(), response.output().toString());
        assertEquals("get_weather", calls.getFirst().name());
        assertEquals(JSON.readTree("{\"city\": \"Paris\"}"), JSON.readTree(calls.getFirst().arguments()));
        assertTrue(calls.getFirst().callId().startsWith("call_"), calls.getFirst().callId());
        assertEquals(ResponseStatus.COMPLETED, response.status().orElseThrow());
        assertTrue(response.output().stream().noneMatch(ResponseOutputItem::isReasoning),
                "effort minimal turns thinking off: " + response.output());
    }

    @Test
    void aNamedFunctionIsCalledWithArgumentsItsSchemaAllows() throws IOException {
        assertTheWeatherCall(client.responses().create(weatherCall()).validate());
    }

    @Test
    void aStreamedCallAccumulatesToTheSameCall() throws IOException {
        ResponseAccumulator accumulator = ResponseAccumulator.create();
        StringBuilder arguments = new StringBuilder();
        try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(weatherCall())) {
            stream.stream().forEach(event -> {
                event.validate();
                accumulator.accumulate(event);
                event.functionCallArgumentsDelta().ifPresent(delta -> arguments.append(delta.delta()));
            });
        }
        Response response = accumulator.response().validate();
        assertTheWeatherCall(response);
        assertEquals(response.output().stream().flatMap(item -> item.functionCall().stream()).findFirst()
                .orElseThrow().arguments(), arguments.toString(), "the argument deltas add up to the arguments");
    }

    // openai (npm) 6.49.0

    @Test
    void theNpmClientGetsTheGreedyText() throws Exception {
        JsonNode text = node().get("text");
        assertEquals(questionAnswer, text.get("outputText").textValue());
        assertEquals("incomplete", text.get("status").textValue());
        assertEquals("max_output_tokens", text.get("incompleteDetails").get("reason").textValue());
        assertEquals(questionPromptTokens, text.get("usage").get("input_tokens").intValue());
        assertEquals(MAX_TOKENS, text.get("usage").get("output_tokens").intValue());
        assertEquals(questionPromptTokens + MAX_TOKENS, text.get("usage").get("total_tokens").intValue());
        assertEquals("[\"message\"]", text.get("outputTypes").toString());
    }

    @Test
    void theNpmClientsStreamIsTheResponsesTypedEventsAndAddsUpToTheText() throws Exception {
        JsonNode stream = node().get("stream");
        assertEquals(questionAnswer, stream.get("deltas").textValue());
        assertEquals(questionAnswer, stream.get("finalText").textValue());
        assertEquals("incomplete", stream.get("status").textValue());
        List<String> types = new ArrayList<>();
        stream.get("types").forEach(type -> types.add(type.textValue()));
        assertEquals(List.of("response.created", "response.in_progress", "response.output_item.added",
                "response.content_part.added"), types.subList(0, 4));
        assertEquals(List.of("response.output_text.done", "response.content_part.done", "response.output_item.done",
                "response.incomplete"), types.subList(types.size() - 4, types.size()));
        assertTrue(types.subList(4, types.size() - 4).stream().allMatch("response.output_text.delta"::equals),
                types.toString());
        for (int i = 0; i < stream.get("sequence").size(); i++) {
            assertEquals(i, stream.get("sequence").get(i).intValue(), "sequence numbers count the events");
        }
    }

    @Test
    void theNpmClientsFunctionCallGoesBackWithItsOutput() throws Exception {
        JsonNode toolCall = node().get("toolCall");
        assertEquals("completed", toolCall.get("status").textValue());
        assertEquals(1, toolCall.get("calls").size());
        JsonNode call = toolCall.get("calls").get(0);
        assertEquals("get_weather", call.get("name").textValue());
        assertEquals(JSON.readTree("{\"city\": \"Paris\"}"), JSON.readTree(call.get("arguments").textValue()));
        assertTrue(call.get("id").textValue().startsWith("fc_"), call.toString());
        // The call and its output are in the prompt as the chat template renders them: the answer is the reference.
        assertEquals(afterCallAnswer, toolCall.get("answerText").textValue());
    }

    @Test
    void theNpmClientsJsonSchemaAnswerParses() throws Exception {
        JsonNode structured = node().get("structured");
        assertEquals("completed", structured.get("status").textValue());
        JsonNode answer = JSON.readTree(structured.get("outputText").textValue());
        assertTrue(List.of("yes", "no").contains(answer.get("answer").textValue()), answer.toString());
        assertEquals(1, answer.size(), answer.toString());
    }

    @Test
    void theNpmClientGetsA400ForAPreviousResponse() throws Exception {
        JsonNode previous = node().get("previous");
        assertEquals(400, previous.get("status").intValue());
        assertEquals("previous_response_id", previous.get("param").textValue());
        assertEquals("invalid_request_error", previous.get("type").textValue());
        assertTrue(previous.get("message").textValue().contains("keeps no responses"), previous.toString());
    }

    // Raw HTTP

    private static HttpResponse<String> post(String body, String contentType) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(fixture.url("/v1/responses")))
                .header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The error a bad body gets: its status and OpenAI's error object, whose param names the field at fault. */
    private static void assertRefused(int status, String param, String code, String body) throws Exception {
        HttpResponse<String> response = post(body, "application/json");
        assertEquals(status, response.statusCode(), response.body());
        JsonNode error = JSON.readTree(response.body()).get("error");
        assertEquals(param, error.get("param").textValue(), response.body());
        assertEquals(code, error.get("code").textValue(), response.body());
        assertEquals("invalid_request_error", error.get("type").textValue(), response.body());
        assertFalse(error.get("message").textValue().isBlank());
    }

    @Test
    void badInputIsRefusedNamingTheField() throws Exception {
        assertRefused(400, "input", "invalid_value", "{\"model\":\"tiny-tied\"}");
        assertRefused(400, "input", "invalid_type", "{\"input\":7}");
        assertRefused(400, "input[0].content[0].type", "unsupported_value", "{\"input\":[{\"role\":\"user\","
                + "\"content\":[{\"type\":\"input_image\",\"image_url\":\"http://x/y.png\"}]}]}");
        assertRefused(400, "input[1].call_id", "invalid_value", "{\"input\":[{\"role\":\"user\",\"content\":\"Hi\"},"
                + "{\"type\":\"function_call_output\",\"call_id\":\"call_x\",\"output\":\"sunny\"}]}");
        assertRefused(400, "input[1].arguments", "invalid_value", "{\"input\":[{\"role\":\"user\",\"content\":\"Hi\"},"
                + "{\"type\":\"function_call\",\"call_id\":\"call_x\",\"name\":\"f\",\"arguments\":\"{oops\"}]}");
        assertRefused(400, "input[0].type", "unsupported_value",
                "{\"input\":[{\"type\":\"item_reference\",\"id\":\"msg_1\"}]}");
        assertRefused(400, "previous_response_id", "unsupported_value",
                "{\"input\":\"Hi\",\"previous_response_id\":\"resp_1\"}");
        assertRefused(400, "tools[0].type", "unsupported_value",
                "{\"input\":\"Hi\",\"tools\":[{\"type\":\"web_search\"}]}");
        assertRefused(400, "tools[0].name", "invalid_value",
                "{\"input\":\"Hi\",\"tools\":[{\"type\":\"function\"}]}");
        assertRefused(400, "tool_choice.name", "invalid_value", "{\"input\":\"Hi\",\"tools\":[" + TOOL + "],"
                + "\"tool_choice\":{\"type\":\"function\",\"name\":\"other\"}}");
        assertRefused(400, "text.format.schema", "invalid_value",
                "{\"input\":\"Hi\",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"x\"}}}");
        assertRefused(400, "reasoning.effort", "invalid_value",
                "{\"input\":\"Hi\",\"reasoning\":{\"effort\":\"huge\"}}");
        assertRefused(400, "max_output_tokens", "invalid_value", "{\"input\":\"Hi\",\"max_output_tokens\":0}");
        assertRefused(400, "metadata.k", "invalid_type", "{\"input\":\"Hi\",\"metadata\":{\"k\":1}}");
        assertRefused(404, "model", "model_not_found", "{\"input\":\"Hi\",\"model\":\"gpt-5\"}");
    }

    @Test
    void theRouteKeepsTheServersDefenses() throws Exception {
        HttpResponse<String> plain = post("{\"input\":\"Hi\"}", "text/plain");
        assertEquals(415, plain.statusCode(), plain.body());
        HttpResponse<String> get = http.send(HttpRequest.newBuilder(URI.create(fixture.url("/v1/responses"))).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, get.statusCode(), get.body());
        assertEquals("POST", get.headers().firstValue("Allow").orElseThrow());
    }
}
