package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import fs.generate.SamplingParams;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a Responses API request becomes the one {@link CompletionRequest}, and what its response repeats of it. */
class ResponsesRequestTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOOL = "{'type':'function','name':'get_weather','description':'Weather',"
            + "'parameters':{'type':'object','properties':{'city':{'type':'string'}}}}";

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static List<ChatMessage> messages(ResponsesRequest request) {
        return ((CompletionRequest.Prompt.Chat) request.completion().prompt()).messages();
    }

    private static Boolean thinking(String body) {
        return ((CompletionRequest.Prompt.Chat) ResponsesRequest.read(json(body)).completion().prompt())
                .enableThinking();
    }

    @Test
    void aStringInputIsOneUserMessageAfterTheInstructions() {
        ResponsesRequest request = ResponsesRequest.read(json("{'model':'m','instructions':'Be brief.','input':'Hi',"
                + "'max_output_tokens':9,'temperature':0.5,'top_p':0.9,'stream':true,'store':false,"
                + "'metadata':{'k':'v'},'user':'u1'}"));
        CompletionRequest completion = request.completion();
        assertEquals(List.of(ChatMessage.system("Be brief."), ChatMessage.user("Hi")), messages(request));
        assertEquals("m", completion.model());
        assertEquals(9, completion.maxTokens());
        assertTrue(completion.stream());
        SamplingParams params = completion.sampling().over(SamplingParams.greedy());
        assertEquals(0.5f, params.temperature());
        assertEquals(0.9f, params.topP());
        assertEquals(json("{'k':'v'}"), request.echo().get("metadata"));
        assertEquals("Be brief.", request.echo().get("instructions").textValue());
        assertEquals(9, request.echo().get("max_output_tokens").intValue());
        assertEquals("u1", request.echo().get("user").textValue());
    }

    @Test
    void itemsBecomeTheConversationTheTemplateRenders() {
        ResponsesRequest request = ResponsesRequest.read(json("{'instructions':'Be brief.','input':["
                + "{'type':'message','role':'developer','content':[{'type':'input_text','text':'Use tools.'}]},"
                + "{'role':'user','content':'Weather in Paris and Rome?'},"
                + "{'type':'reasoning','id':'rs_1','summary':[],'content':[{'type':'reasoning_text','text':'hm'}]},"
                + "{'type':'message','id':'msg_1','role':'assistant','status':'completed',"
                + "'content':[{'type':'output_text','text':'Checking.','annotations':[]}]},"
                + "{'type':'function_call','id':'fc_1','call_id':'call_1','name':'get_weather',"
                + "'arguments':'{\\'city\\': \\'Paris\\'}','status':'completed'},"
                + "{'type':'function_call','call_id':'call_2','name':'get_weather',"
                + "'arguments':'{\\'city\\':\\'Rome\\'}'},"
                + "{'type':'function_call_output','call_id':'call_1','output':'sunny'},"
                + "{'type':'function_call_output','call_id':'call_2','output':[{'type':'input_text','text':'rain'}]},"
                + "{'role':'user','content':'Thanks'}]}"));
        assertEquals(List.of(ChatMessage.system("Be brief.\n\nUse tools."),
                ChatMessage.user("Weather in Paris and Rome?"),
                new ChatMessage("assistant", "Checking.", "hm", List.of(
                        new ToolCall("get_weather", json("{'city':'Paris'}")),
                        new ToolCall("get_weather", json("{'city':'Rome'}")))),
                ChatMessage.tool("sunny"), ChatMessage.tool("rain"), ChatMessage.user("Thanks")),
                messages(request));
    }

    @Test
    void aCallWithoutAMessageBeforeItIsAnAssistantTurnOfItsOwn() {
        ResponsesRequest request = ResponsesRequest.read(json("{'input':[{'role':'user','content':'Hi'},"
                + "{'type':'function_call','call_id':'c','name':'f','arguments':'{}'},"
                + "{'type':'function_call_output','call_id':'c','output':'done'}]}"));
        assertEquals(List.of(ChatMessage.user("Hi"),
                new ChatMessage("assistant", "", null, List.of(new ToolCall("f", json("{}")))),
                ChatMessage.tool("done")), messages(request));
    }

    @Test
    void minimalOrNoReasoningEffortTurnsThinkingOff() {
        assertNull(thinking("{'input':'Hi'}"), "the template's default (Qwen3: on)");
        assertEquals(Boolean.FALSE, thinking("{'input':'Hi','reasoning':{'effort':'minimal'}}"));
        assertEquals(Boolean.FALSE, thinking("{'input':'Hi','reasoning':{'effort':'none'}}"));
        assertEquals(Boolean.TRUE, thinking("{'input':'Hi','reasoning':{'effort':'high','summary':'auto'}}"));
    }

    @Test
    void flatToolsAreShownToTheModelAsChatCompletionsWritesThem() {
        ResponsesRequest request = ResponsesRequest.read(json("{'input':'Hi','tools':[" + TOOL + "],"
                + "'tool_choice':{'type':'function','name':'get_weather'},'parallel_tool_calls':false}"));
        ChatTools tools = request.completion().tools();
        assertEquals(new ChatTools.Choice.Named("get_weather"), tools.choice());
        assertEquals(false, tools.parallel());
        assertEquals(json("{'type':'function','function':{'name':'get_weather','description':'Weather',"
                + "'parameters':{'type':'object','properties':{'city':{'type':'string'}}}}}"),
                tools.templateTools().getFirst());
        assertEquals("tools[0].parameters", tools.functions().getFirst().schemaParam());
        JsonNode echoed = request.echo().get("tools").get(0);
        assertTrue(echoed.get("strict").isNull(), "the response lists every tool's strict flag: " + echoed);
        assertEquals(json("{'type':'function','name':'get_weather'}"), request.echo().get("tool_choice"));
        assertEquals(false, request.echo().get("parallel_tool_calls").booleanValue());
    }

    @Test
    void aJsonSchemaTextFormatConstrainsTheAnswer() {
        ResponsesRequest request = ResponsesRequest.read(json("{'input':'Hi','text':{'format':{'type':'json_schema',"
                + "'name':'answer','strict':true,'schema':{'type':'object'}}}}"));
        assertEquals(new OutputFormat.JsonSchema(json("{'type':'object'}"), "text.format.schema"),
                request.completion().format());
        assertEquals("json_schema", request.echo().get("text").get("format").get("type").textValue());
        assertEquals(new OutputFormat.JsonObject(), ResponsesRequest.read(json("{'input':'Hi',"
                + "'text':{'format':{'type':'json_object'}}}")).completion().format());
    }

    @Test
    void whatNeedsAKeptResponseIsRefused() {
        for (String field : List.of("'previous_response_id':'resp_1'", "'conversation':'conv_1'",
                "'background':true", "'prompt':{'id':'pmpt_1'}")) {
            ApiException error = assertThrows(ApiException.class,
                    () -> ResponsesRequest.read(json("{'input':'Hi'," + field + "}")));
            assertEquals(400, error.status);
            assertEquals(field.substring(1, field.indexOf('\'', 1)), error.param, error.getMessage());
        }
    }

    @Test
    void inputOfOnlySystemMessagesIsRefused() {
        ApiException error = assertThrows(ApiException.class, () -> ResponsesRequest.read(json(
                "{'input':[{'role':'system','content':'Be brief.'}]}")));
        assertEquals("input", error.param);
    }
}
