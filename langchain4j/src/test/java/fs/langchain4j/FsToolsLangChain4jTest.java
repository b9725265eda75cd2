package fs.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonSchema;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.service.AiServices;
import fs.api.ChatParams;
import fs.api.FsModel;
import fs.api.GreedyReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tools and JSON response formats through LangChain4j on models/tiny-tied, a random model that would never call a
 * tool or write JSON by itself: the calls and the JSON are the grammar's doing, and AiServices runs an {@code @Tool}
 * method end to end.
 */
class FsToolsLangChain4jTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ToolSpecification ADD = ToolSpecification.builder().name("add").description("Adds two numbers")
            .parameters(JsonObjectSchema.builder().addProperty("a", JsonIntegerSchema.builder().build())
                    .addProperty("b", JsonIntegerSchema.builder().build()).required("a", "b").build())
            .build();

    private static FsModel model;
    private static FsChatModel chatModel;

    @BeforeAll
    static void load() {
        model = FsModel.load(GreedyReference.MODEL.toString(), FsModel.Options.defaults().withBackend("cpu")
                .withThreads(2).withContextLength(2048));
        chatModel = new FsChatModel(model, ChatParams.defaults().withTemperature(0.7f).withSeed(11)
                .withMaxTokens(200).withThinking(false));
    }

    @AfterAll
    static void close() {
        if (model != null) model.close();
    }

    enum City { PARIS, ROME, OSLO }

    /** A tool whose calls are recorded; its arguments are bounded (an enum), so a random model's call ends. */
    static final class WeatherTool {
        final List<City> asked = Collections.synchronizedList(new ArrayList<>());

        @Tool("The weather in a city")
        String weather(@P("the city") City city) {
            asked.add(city);
            return "sunny in " + city;
        }
    }

    interface Assistant {
        String chat(String message);
    }

    @Test
    void aiServicesRunATool() {
        WeatherTool tool = new WeatherTool();
        List<ChatRequest> requests = Collections.synchronizedList(new ArrayList<>());
        Assistant assistant = AiServices.builder(Assistant.class).chatModel(chatModel).tools(tool)
                // The first turn must call (a random model would not); once the results are in, the model is free.
                .chatRequestTransformer(request -> {
                    requests.add(request);
                    if (!(request.messages().getLast() instanceof UserMessage)) return request;
                    return ChatRequest.builder().messages(request.messages()).parameters(request.parameters()
                            .overrideWith(ChatRequestParameters.builder().toolChoice(ToolChoice.REQUIRED).build()))
                            .build();
                })
                .build();
        String answer = assistant.chat("What is the weather in Paris?");
        assertNotNull(answer);
        assertFalse(tool.asked.isEmpty(), "the tool was called");
        ChatRequest afterTools = requests.getLast();
        List<ToolExecutionResultMessage> results = afterTools.messages().stream()
                .filter(m -> m instanceof ToolExecutionResultMessage).map(m -> (ToolExecutionResultMessage) m).toList();
        assertEquals(tool.asked.size(), results.size());
        assertEquals("sunny in " + tool.asked.getFirst(), results.getFirst().text(),
                "the tool's result went back to the model");
    }

    @Test
    void toolCallsComeBackAsToolExecutionRequests() throws Exception {
        ChatResponse response = chatModel.chat(ChatRequest.builder().messages(UserMessage.from("1 + 2?"))
                .toolSpecifications(ADD).toolChoice(ToolChoice.REQUIRED).build());
        assertEquals(FinishReason.TOOL_EXECUTION, response.finishReason());
        List<ToolExecutionRequest> calls = response.aiMessage().toolExecutionRequests();
        assertFalse(calls.isEmpty());
        for (ToolExecutionRequest call : calls) {
            assertEquals("add", call.name());
            JsonNode arguments = JSON.readTree(call.arguments());
            assertTrue(arguments.path("a").isIntegralNumber() && arguments.path("b").isIntegralNumber()
                    && arguments.size() == 2, call.arguments());
        }
    }

    @Test
    void streamedCallsReachOnCompleteToolCallAndTheResponse() throws Exception {
        FsStreamingChatModel streaming = new FsStreamingChatModel(model, ChatParams.defaults().withTemperature(0.7f)
                .withSeed(5).withMaxTokens(200).withThinking(false));
        List<CompleteToolCall> completed = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        streaming.chat(ChatRequest.builder().messages(UserMessage.from("1 + 2?")).toolSpecifications(ADD)
                .toolChoice(ToolChoice.REQUIRED).build(), new StreamingChatResponseHandler() {
                    @Override
                    public void onCompleteToolCall(CompleteToolCall call) {
                        completed.add(call);
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
        assertEquals(FinishReason.TOOL_EXECUTION, response.finishReason());
        assertFalse(completed.isEmpty());
        assertEquals(response.aiMessage().toolExecutionRequests(),
                completed.stream().map(CompleteToolCall::toolExecutionRequest).toList());
        assertEquals(0, completed.getFirst().index());
    }

    @Test
    void aJsonSchemaResponseFormatHoldsTheAnswer() throws Exception {
        ResponseFormat format = ResponseFormat.builder().type(ResponseFormatType.JSON).jsonSchema(JsonSchema.builder()
                .name("count").rootElement(JsonObjectSchema.builder()
                        .addProperty("count", JsonIntegerSchema.builder().build()).required("count").build())
                .build()).build();
        ChatResponse response = chatModel.chat(ChatRequest.builder().messages(UserMessage.from("How many?"))
                .responseFormat(format).build());
        JsonNode answer = JSON.readTree(response.aiMessage().text());
        assertInstanceOf(com.fasterxml.jackson.databind.node.ObjectNode.class, answer);
        assertTrue(answer.path("count").isIntegralNumber() && answer.size() == 1, answer.toString());
    }
}
