package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How an Anthropic Messages body becomes the server's one request, and which bodies are refused, naming the field. */
class AnthropicRequestTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOOL = "{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\"}}";

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(text, e);
        }
    }

    private static CompletionRequest read(String fields) {
        return AnthropicRequest.message(json("{\"max_tokens\":16," + fields + "}"));
    }

    private static List<ChatMessage> messages(CompletionRequest request) {
        return ((CompletionRequest.Prompt.Chat) request.prompt()).messages();
    }

    @Test
    void blocksBecomeTheTemplatesMessages() {
        CompletionRequest request = read("\"system\":[{\"type\":\"text\",\"text\":\"Be \"},{\"type\":\"text\","
                + "\"text\":\"brief.\"}],\"messages\":["
                + "{\"role\":\"user\",\"content\":\"Weather?\"},"
                + "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"Look it up.\","
                + "\"signature\":\"x\"},{\"type\":\"text\",\"text\":\"Checking.\"},{\"type\":\"tool_use\","
                + "\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}]},"
                + "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\","
                + "\"content\":[{\"type\":\"text\",\"text\":\"no such city\"}],\"is_error\":true},"
                + "{\"type\":\"text\",\"text\":\"Try again.\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]");
        assertEquals(List.of(ChatMessage.system("Be brief."), ChatMessage.user("Weather?"),
                new ChatMessage("assistant", "Checking.", "Look it up.",
                        List.of(new ToolCall("get_weather", json("{\"city\":\"Paris\"}")))),
                ChatMessage.tool("Error: no such city"), ChatMessage.user("Try again.")), messages(request));
        assertEquals(16, request.maxTokens());
        assertFalse(request.stream());
    }

    @Test
    void samplingStopSequencesAndThinkingAreRead() {
        CompletionRequest request = read("\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"temperature\":0.5,"
                + "\"top_p\":0.9,\"top_k\":40,\"stop_sequences\":[\"END\",\"\"],\"stream\":true,"
                + "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024},\"metadata\":{\"user_id\":\"u\"}");
        assertEquals(new CompletionRequest.Sampling(0.5f, 40, 0.9f, null, null, null, null, null), request.sampling());
        assertEquals(List.of("END"), request.stop());
        assertTrue(request.stream());
        assertEquals(Boolean.TRUE, ((CompletionRequest.Prompt.Chat) request.prompt()).enableThinking());
        CompletionRequest off = read("\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                + "\"thinking\":{\"type\":\"disabled\"}");
        assertEquals(Boolean.FALSE, ((CompletionRequest.Prompt.Chat) off.prompt()).enableThinking());
    }

    @Test
    void toolChoiceMapsOntoTheChatTools() {
        String user = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"tools\":[" + TOOL + "]";
        ChatTools auto = read(user).tools();
        assertEquals(new ChatTools.Choice.Auto(), auto.choice());
        assertTrue(auto.parallel());
        assertEquals("get_weather", auto.templateTools().getFirst().at("/function/name").textValue(),
                "the template sees OpenAI's tool object");
        ChatTools any = read(user + ",\"tool_choice\":{\"type\":\"any\",\"disable_parallel_tool_use\":true}").tools();
        assertEquals(new ChatTools.Choice.Required(), any.choice());
        assertFalse(any.parallel());
        assertEquals(new ChatTools.Choice.Named("get_weather"),
                read(user + ",\"tool_choice\":{\"type\":\"tool\",\"name\":\"get_weather\"}").tools().choice());
        assertFalse(read(user + ",\"tool_choice\":{\"type\":\"none\"}").tools().offered());
    }

    /** The field a refused body's 400 names. */
    private static String refusedField(String body) {
        ApiException error = assertThrows(ApiException.class, () -> AnthropicRequest.message(json(body)));
        assertEquals(400, error.status, error.getMessage());
        return error.param;
    }

    @Test
    void badBodiesAreRefusedNamingTheField() {
        String hi = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";
        assertEquals("max_tokens", refusedField("{" + hi + "}"));
        assertEquals("max_tokens", refusedField("{\"max_tokens\":0," + hi + "}"));
        assertEquals("messages", refusedField("{\"max_tokens\":5,\"messages\":[]}"));
        assertEquals("messages[0].role", refusedField("{\"max_tokens\":5,\"messages\":[{\"role\":\"tool\","
                + "\"content\":\"x\"}]}"));
        assertEquals("messages[0].content[0].type", refusedField("{\"max_tokens\":5,\"messages\":[{\"role\":"
                + "\"user\",\"content\":[{\"type\":\"image\",\"source\":{}}]}]}"));
        assertEquals("messages[0].content[0].input", refusedField("{\"max_tokens\":5,\"messages\":[{\"role\":"
                + "\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\","
                + "\"input\":\"x\"}]}]}"));
        assertEquals("tools[0].type", refusedField("{\"max_tokens\":5," + hi + ",\"tools\":[{\"type\":"
                + "\"web_search_20250305\",\"name\":\"web_search\"}]}"));
        assertEquals("tools[0].input_schema", refusedField("{\"max_tokens\":5," + hi
                + ",\"tools\":[{\"name\":\"f\"}]}"));
        assertEquals("tools[1].name", refusedField("{\"max_tokens\":5," + hi + ",\"tools\":[" + TOOL + "," + TOOL
                + "]}"));
        assertEquals("tool_choice", refusedField("{\"max_tokens\":5," + hi + ",\"tool_choice\":{\"type\":\"any\"}}"));
        assertEquals("thinking.type", refusedField("{\"max_tokens\":5," + hi + ",\"thinking\":{\"type\":\"on\"}}"));
        assertEquals("stop_sequences[0]", refusedField("{\"max_tokens\":5," + hi + ",\"stop_sequences\":[1]}"));
    }

    @Test
    void countTokensNeedsNoMaxTokens() {
        CompletionRequest request = AnthropicRequest.countTokens(json("{\"messages\":[{\"role\":\"user\","
                + "\"content\":\"Hi\"}],\"tools\":[" + TOOL + "]}"));
        assertEquals(List.of(ChatMessage.user("Hi")), messages(request));
        assertTrue(request.tools().offered());
    }
}
