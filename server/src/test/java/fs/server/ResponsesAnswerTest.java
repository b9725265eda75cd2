package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.openai.core.ObjectMappers;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseStreamEvent;
import fs.generate.ReasoningSplitter;
import fs.generate.ToolCallSplitter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Responses API's output items and stream events for an answer with all three kinds of item, which the tiny test
 * model does not write of its own accord: thoughts, text, then a call.
 */
class ResponsesAnswerTest {
    private final List<ObjectNode> events = new ArrayList<>();
    private final ResponsesAnswer answer = new ResponsesAnswer("m",
            ResponsesRequest.read(JsonNodeFactory.instance.objectNode().put("input", "Hi")).echo(), (type, event) -> {
                assertEquals(type, event.get("type").textValue(), "the event line names the event's type");
                events.add(event);
            });

    private ObjectNode answerWithThoughtsTextAndACall(AnswerRelay.End end) throws Exception {
        answer.start();
        answer.text(new ReasoningSplitter.Delta("Let me ", ""));
        answer.text(new ReasoningSplitter.Delta("think.", ""));
        answer.text(new ReasoningSplitter.Delta("", "Checking."));
        answer.callPiece(new ToolCallSplitter.Piece.Opened("call_1", "get_weather"));
        answer.callPiece(new ToolCallSplitter.Piece.Arguments("{\"city\": "));
        answer.callPiece(new ToolCallSplitter.Piece.Arguments("\"Paris\"}"));
        answer.callPiece(new ToolCallSplitter.Piece.Closed(
                new ToolCallSplitter.Call("call_1", "get_weather", "{\"city\": \"Paris\"}"), true));
        return answer.finish(end, ResponsesAnswer.usage(10, 2, 20, 4));
    }

    private List<String> types() {
        return events.stream().map(event -> event.get("type").textValue()).toList();
    }

    @Test
    void eachKindOfTheAnswerIsAnItemInOrder() throws Exception {
        ObjectNode response = answerWithThoughtsTextAndACall(AnswerRelay.End.TOOL_CALLS);
        assertEquals("completed", response.get("status").textValue());
        JsonNode output = response.get("output");
        assertEquals(3, output.size(), output.toString());
        assertEquals("reasoning", output.get(0).get("type").textValue());
        assertEquals("Let me think.", output.get(0).get("content").get(0).get("text").textValue());
        assertEquals("reasoning_text", output.get(0).get("content").get(0).get("type").textValue());
        assertEquals(0, output.get(0).get("summary").size());
        assertEquals("message", output.get(1).get("type").textValue());
        assertEquals("Checking.", output.get(1).get("content").get(0).get("text").textValue());
        assertEquals("output_text", output.get(1).get("content").get(0).get("type").textValue());
        JsonNode call = output.get(2);
        assertEquals("function_call", call.get("type").textValue());
        assertEquals("call_1", call.get("call_id").textValue());
        assertEquals("get_weather", call.get("name").textValue());
        assertEquals("{\"city\": \"Paris\"}", call.get("arguments").textValue());
        for (JsonNode item : output) assertEquals("completed", item.get("status").textValue(), item.toString());
        assertEquals(30, response.get("usage").get("total_tokens").intValue());
        assertEquals(4, response.get("usage").get("output_tokens_details").get("reasoning_tokens").intValue());
        assertEquals(2, response.get("usage").get("input_tokens_details").get("cached_tokens").intValue());
    }

    @Test
    void openaiJavaReadsTheResponseAndEveryEvent() throws Exception {
        // openai-java 4.8.0's models: validate() fails on a field they require that is missing or of the wrong type.
        ObjectNode response = answerWithThoughtsTextAndACall(AnswerRelay.End.TOOL_CALLS);
        Response parsed = ObjectMappers.jsonMapper().readValue(response.toString(), Response.class).validate();
        assertEquals(List.of(true, false, false), parsed.output().stream().map(item -> item.isReasoning()).toList());
        assertEquals("Let me think.", parsed.output().getFirst().asReasoning().content().orElseThrow().getFirst()
                .text());
        assertEquals("get_weather", parsed.output().getLast().asFunctionCall().name());
        for (ObjectNode event : events) {
            ObjectMappers.jsonMapper().readValue(event.toString(), ResponseStreamEvent.class).validate();
        }
    }

    @Test
    void theStreamTellsEachStepOfEachItem() throws Exception {
        ObjectNode response = answerWithThoughtsTextAndACall(AnswerRelay.End.TOOL_CALLS);
        assertEquals(List.of("response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added",
                "response.reasoning_text.delta", "response.reasoning_text.delta",
                "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
                "response.output_item.added", "response.content_part.added", "response.output_text.delta",
                "response.output_text.done", "response.content_part.done", "response.output_item.done",
                "response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.delta", "response.function_call_arguments.done",
                "response.output_item.done", "response.completed"), types());
        for (int i = 0; i < events.size(); i++) assertEquals(i, events.get(i).get("sequence_number").intValue());
        // Each item's events carry its id and index; the last event carries the response.
        for (ObjectNode event : events) {
            if (event.has("item_id")) {
                JsonNode item = response.get("output").get(event.get("output_index").intValue());
                assertEquals(item.get("id"), event.get("item_id"), event.toString());
            }
        }
        assertEquals(response, events.getLast().get("response"));
        assertEquals("{\"city\": \"Paris\"}", events.get(18).get("arguments").textValue());
    }

    @Test
    void anAnswerCutByTheTokenLimitIsIncomplete() throws Exception {
        answer.text(new ReasoningSplitter.Delta("", "Once upon"));
        ObjectNode response = answer.finish(AnswerRelay.End.LENGTH, ResponsesAnswer.usage(3, 0, 2, 0));
        assertEquals("incomplete", response.get("status").textValue());
        assertEquals("max_output_tokens", response.get("incomplete_details").get("reason").textValue());
        assertEquals("incomplete", response.get("output").get(0).get("status").textValue());
        assertEquals("response.incomplete", types().getLast());
    }

    @Test
    void aFailedAnswerEndsWithAnErrorAndAFailedResponse() throws Exception {
        answer.text(new ReasoningSplitter.Delta("", "Once"));
        answer.fail(ApiException.unavailable("shutting_down", "the server is shutting down"),
                ResponsesAnswer.usage(3, 0, 1, 0));
        assertEquals(List.of("response.output_item.added", "response.content_part.added",
                "response.output_text.delta", "response.output_text.done", "response.content_part.done",
                "response.output_item.done", "error", "response.failed"), types());
        ObjectNode error = events.get(6);
        assertEquals("shutting_down", error.get("code").textValue());
        JsonNode failed = events.getLast().get("response");
        assertEquals("failed", failed.get("status").textValue());
        assertEquals("server_error", failed.get("error").get("code").textValue());
        assertTrue(failed.get("error").get("message").textValue().contains("shutting down"));
        for (ObjectNode event : events) {
            ObjectMappers.jsonMapper().readValue(event.toString(), ResponseStreamEvent.class).validate();
        }
    }
}
