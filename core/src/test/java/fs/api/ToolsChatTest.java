package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tools and response schemas of the library's chats, on models/tiny-tied: a random model, which never writes a call
 * or JSON of its own accord, so the calls and the JSON that come back are the constraints' doing.
 */
class ToolsChatTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Tool WEATHER = Tool.of("get_weather", "The weather in a city", "{\"type\": \"object\", "
            + "\"properties\": {\"city\": {\"type\": \"string\", \"maxLength\": 10}, \"unit\": {\"enum\": "
            + "[\"celsius\", \"fahrenheit\"]}}, \"required\": [\"city\", \"unit\"]}");

    private static FsModel model;

    @BeforeAll
    static void load() {
        model = FsModel.load(GreedyReference.MODEL.toString(), FsModel.Options.defaults().withBackend("cpu")
                .withThreads(2).withContextLength(2048));
    }

    @AfterAll
    static void close() {
        if (model != null) model.close();
    }

    private static ChatParams params() {
        return ChatParams.defaults().withTemperature(0.7f).withSeed(3).withMaxTokens(300).withThinking(false);
    }

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(text, e);
        }
    }

    /** Checks a call of get_weather against its schema, by hand. */
    private static void assertWeatherArguments(ToolCall call) {
        assertEquals("get_weather", call.name());
        JsonNode arguments = json(call.arguments());
        String city = arguments.path("city").asText();
        assertTrue(arguments.path("city").isTextual() && city.codePointCount(0, city.length()) <= 10,
                call.arguments()); // JSON Schema counts characters, not UTF-16 units
        assertTrue(List.of("celsius", "fahrenheit").contains(arguments.path("unit").asText()), call.arguments());
        assertEquals(2, arguments.size(), call.arguments());
    }

    @Test
    void requiredToolsAreCalledAndTheResultGoesBackAsAMessage() {
        try (Chat chat = model.newChat(params().withTools(List.of(WEATHER)).withToolChoice(ToolChoice.REQUIRED))) {
            List<String> shown = new ArrayList<>();
            Reply first = chat.send("Weather in Paris?", shown::add);
            assertFalse(first.toolCalls().isEmpty(), first.toString());
            first.toolCalls().forEach(ToolsChatTest::assertWeatherArguments);
            assertEquals("", String.join("", shown), "the calls are no text for the user");
            List<Message> results = first.toolCalls().stream()
                    .map(call -> Message.toolResult(call.id(), "{\"sky\": \"clear\"}")).toList();
            Reply second = chat.send(results, text -> {}, new Cancellation());
            // The calls are rendered again (as the template writes them, not in the model's tokens), with the results.
            assertTrue(second.promptTokens() > first.promptTokens(), "the calls and their results are in the prompt");
            List<Message> history = chat.history();
            assertEquals(Message.user("Weather in Paris?"), history.get(0));
            assertEquals(first.toolCalls(), history.get(1).toolCalls());
            assertEquals(results, history.subList(2, 2 + results.size()));
        }
    }

    @Test
    void aResponseSchemaHoldsTheAnswer() {
        String schema = "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\"}, \"ok\": "
                + "{\"type\": \"boolean\"}}, \"required\": [\"n\", \"ok\"]}";
        try (Chat chat = model.newChat(params().withResponseSchema(schema))) {
            JsonNode answer = json(chat.send("A number?", text -> {}).text());
            assertTrue(answer.path("n").isIntegralNumber() && answer.path("ok").isBoolean(), answer.toString());
        }
    }

    @Test
    void autoLeavesARandomModelToAPlainAnswer() {
        try (Chat chat = model.newChat(params().withTools(List.of(WEATHER)).withMaxTokens(10))) {
            Reply reply = chat.send("Hello", text -> {});
            assertEquals(List.of(), reply.toolCalls());
            assertFalse(reply.text().isEmpty());
        }
    }

    @Test
    void unusableToolsAndSchemasAreRefusedWithOneLine() {
        FsException pattern = assertThrows(FsException.class, () -> Tool.of("f", null,
                "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\", \"pattern\": \"a+\"}}}"));
        assertTrue(pattern.getMessage().contains("pattern") && pattern.getMessage().contains("tool f"),
                pattern.getMessage());
        assertThrows(FsException.class, () -> Tool.of("has space", null, null));
        assertThrows(FsException.class, () -> ChatParams.defaults().withResponseSchema("[1]"));
        assertThrows(FsException.class, () -> ChatParams.defaults().withTools(List.of(WEATHER))
                .withResponseSchema("{\"type\": \"string\"}"));
        assertThrows(FsException.class, () -> new Message(Message.Role.USER, "x", List.of(), "call_1"),
                "only a tool's result answers a call");
    }
}
