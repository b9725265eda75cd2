package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import java.util.List;
import org.junit.jupiter.api.Test;

/** tools, tool_choice, parallel_tool_calls, the answer formats and tool messages, as a chat request reads them. */
class ToolsRequestTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String USER = "'messages':[{'role':'user','content':'x'}]";
    private static final String WEATHER = "{'type':'function','function':{'name':'get_weather','description':'Now',"
            + "'parameters':{'type':'object','properties':{'city':{'type':'string'}},'required':['city']}}}";
    private static final String TIME = "{'type':'function','function':{'name':'get_time'}}";

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static CompletionRequest chat(String fields) {
        return CompletionRequest.chat(json("{" + USER + (fields.isEmpty() ? "" : "," + fields) + "}"));
    }

    private static ApiException refused(String fields) {
        return assertThrows(ApiException.class, () -> chat(fields));
    }

    @Test
    void toolsAreOfferedToTheTemplateAsGivenAndAutoIsTheDefault() {
        CompletionRequest request = chat("'tools':[" + WEATHER + "," + TIME + "]");
        ChatTools tools = request.tools();
        assertInstanceOf(ChatTools.Choice.Auto.class, tools.choice());
        assertTrue(tools.parallel());
        assertEquals(List.of("get_weather", "get_time"), tools.functions().stream().map(ChatTools.Function::name)
                .toList());
        assertEquals(List.of(json(WEATHER), json(TIME)), tools.templateTools());
        assertEquals(json("{'type':'object','properties':{}}"), tools.functions().get(1).parameters(),
                "a function without parameters takes an empty object");
        assertInstanceOf(OutputFormat.Text.class, request.format());
    }

    @Test
    void toolChoiceAndParallelCallsAreRead() {
        assertInstanceOf(ChatTools.Choice.Required.class,
                chat("'tools':[" + WEATHER + "],'tool_choice':'required'").tools().choice());
        ChatTools none = chat("'tools':[" + WEATHER + "],'tool_choice':'none'").tools();
        assertFalse(none.offered());
        assertEquals(List.of(), none.templateTools(), "tool_choice none hides the tools from the model");
        ChatTools named = chat("'tools':[" + WEATHER + "," + TIME + "],'parallel_tool_calls':false,"
                + "'tool_choice':{'type':'function','function':{'name':'get_time'}}").tools();
        assertEquals(new ChatTools.Choice.Named("get_time"), named.choice());
        assertEquals(List.of("get_time"), named.callable().stream().map(ChatTools.Function::name).toList());
        assertFalse(named.parallel());
        assertFalse(chat("'tools':[]").tools().offered(), "an empty tools array offers nothing");
    }

    @Test
    void badToolsAndChoicesNameTheField() {
        assertEquals("tools[0].function", refused("'tools':[{'type':'function'}]").param);
        assertEquals("tools[0].type", refused("'tools':[{'type':'retrieval','function':{'name':'f'}}]").param);
        assertEquals("tools[1].function.name", refused("'tools':[" + TIME + "," + TIME + "]").param);
        assertEquals("tools[0].function.name",
                refused("'tools':[{'type':'function','function':{'name':'has space'}}]").param);
        assertEquals("tools[0].function.parameters",
                refused("'tools':[{'type':'function','function':{'name':'f','parameters':'x'}}]").param);
        assertEquals("tools", refused("'tools':{}").param);
        ApiException unknown = refused("'tools':[" + WEATHER + "],"
                + "'tool_choice':{'type':'function','function':{'name':'get_time'}}");
        assertEquals("tool_choice.function.name", unknown.param);
        assertTrue(unknown.getMessage().contains("get_time"), unknown.getMessage());
        assertEquals("tool_choice", refused("'tool_choice':'required'").param, "tool_choice without tools");
        assertEquals("tool_choice", refused("'tools':[" + WEATHER + "],'tool_choice':'always'").param);
        assertEquals("parallel_tool_calls", refused("'tools':[" + WEATHER + "],'parallel_tool_calls':1").param);
        assertEquals("tools", refused("'tools':[" + WEATHER + "],'response_format':{'type':'json_object'}").param);
        assertEquals(400, refused("'tool_choice':'auto'").status);
    }

    @Test
    void answerFormatsAreRead() {
        assertInstanceOf(OutputFormat.JsonObject.class, chat("'response_format':{'type':'json_object'}").format());
        assertInstanceOf(OutputFormat.Text.class, chat("'response_format':{'type':'text'}").format());
        OutputFormat.JsonSchema schema = (OutputFormat.JsonSchema) chat("'response_format':{'type':'json_schema',"
                + "'json_schema':{'name':'n','strict':true,'schema':{'type':'integer'}}}").format();
        assertEquals(json("{'type':'integer'}"), schema.schema());
        assertEquals("response_format.json_schema.schema", schema.param());
        assertEquals(new OutputFormat.Gbnf("root ::= \"a\"", "grammar"),
                chat("'grammar':'root ::= \\\"a\\\"'").format());
        assertEquals(new OutputFormat.JsonSchema(json("{'type':'string'}"), "json_schema"),
                chat("'json_schema':{'type':'string'}").format());
        assertEquals(new OutputFormat.JsonSchema(json("{'type':'string'}"), "json_schema"),
                CompletionRequest.completion(json("{'prompt':'x','json_schema':{'type':'string'}}")).format(),
                "a text completion takes llama-server's fields too");
    }

    @Test
    void badFormatsNameTheField() {
        assertEquals("response_format.json_schema.name",
                refused("'response_format':{'type':'json_schema','json_schema':{'schema':{}}}").param);
        assertEquals("response_format.json_schema.schema",
                refused("'response_format':{'type':'json_schema','json_schema':{'name':'n','schema':[]}}").param);
        assertEquals("response_format.json_schema", refused("'response_format':{'type':'json_schema'}").param);
        assertEquals("grammar", refused("'grammar':5").param);
        assertEquals("json_schema", refused("'json_schema':'x'").param);
        assertEquals("grammar", refused("'response_format':{'type':'json_object'},'grammar':'root ::= \\\"a\\\"'")
                .param, "two constraints on one answer");
        assertEquals("tools", assertThrows(ApiException.class, () -> CompletionRequest.completion(
                json("{'prompt':'x','tools':[" + TIME + "]}"))).param);
    }

    @Test
    void assistantCallsAndToolResultsBecomeTemplateMessages() {
        CompletionRequest request = CompletionRequest.chat(json("{'messages':[{'role':'user','content':'Weather?'},"
                + "{'role':'assistant','content':null,'tool_calls':[{'id':'call_1','type':'function',"
                + "'function':{'name':'get_weather','arguments':'{\\\"city\\\": \\\"Paris\\\"}'}}]},"
                + "{'role':'tool','tool_call_id':'call_1','content':'sunny'}],'tools':[" + WEATHER + "]}"));
        List<ChatMessage> messages = ((CompletionRequest.Prompt.Chat) request.prompt()).messages();
        assertEquals(List.of(new ChatMessage("user", "Weather?"),
                new ChatMessage("assistant", "", null, List.of(new ToolCall("get_weather",
                        json("{'city':'Paris'}")))),
                new ChatMessage("tool", "sunny")), messages);
    }

    @Test
    void badToolMessagesNameTheField() {
        String call = "{'role':'assistant','content':null,'tool_calls':[{'type':'function','function':"
                + "{'name':'f','arguments':ARGS}}]}";
        assertEquals("messages[0].tool_calls[0].function.arguments", assertThrows(ApiException.class,
                () -> CompletionRequest.chat(json("{'messages':[" + call.replace("ARGS", "'{oops'") + "]}"))).param);
        assertEquals("messages[0].tool_calls[0].function.arguments", assertThrows(ApiException.class,
                () -> CompletionRequest.chat(json("{'messages':[" + call.replace("ARGS", "{}") + "]}"))).param,
                "arguments travel as a string holding JSON");
        assertEquals("messages[0].tool_calls", assertThrows(ApiException.class, () -> CompletionRequest.chat(
                json("{'messages':[{'role':'assistant','content':'','tool_calls':{}}]}"))).param);
        assertEquals("messages[0].content", assertThrows(ApiException.class, () -> CompletionRequest.chat(
                json("{'messages':[{'role':'tool','tool_call_id':'c'}]}"))).param);
    }
}
