package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.chat.ChatMessage;
import fs.chat.ToolCall;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Anthropic's Messages API on a scripted engine that answers as Qwen3 does when it thinks and then calls a tool: the
 * thinking, the text and the call arrive as thinking, text and tool_use blocks, whole and streamed, through
 * Anthropic's TypeScript SDK (@anthropic-ai/sdk 1.17.0, pinned in server/src/test/node/package.json), and go back
 * into the prompt with the tool's result as the chat template renders them; raw HTTP checks the event framing and the
 * error shape.
 */
class AnthropicToolUseTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String THOUGHT = "The user wants the weather.";
    private static final String TEXT = "Let me check.";
    private static final String ANSWER = "<think>\n" + THOUGHT + "\n</think>\n\n" + TEXT
            + "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}"
            + "\n</tool_call>";

    private static TestServer fixture;
    private static ScriptedEngine engine;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        fixture = TestServer.load(64);
        engine = new ScriptedEngine(fixture.tokenizer.encode(ANSWER), 0);
        fixture.serve(engine, null);
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static ObjectNode weatherTool() {
        ObjectNode tool = JSON.createObjectNode().put("name", "get_weather")
                .put("description", "The weather in a city");
        ObjectNode schema = tool.putObject("input_schema").put("type", "object");
        schema.putObject("properties").putObject("city").put("type", "string");
        schema.putArray("required").add("city");
        return tool;
    }

    private static ObjectNode question() {
        ObjectNode params = JSON.createObjectNode().put("model", TestServer.MODEL_ID).put("max_tokens", 200);
        params.putArray("messages").addObject().put("role", "user").put("content", "Weather in Paris?");
        params.putArray("tools").add(weatherTool());
        return params;
    }

    private static JsonNode sdk(String mode, JsonNode params) throws Exception {
        return JSON.readTree(NodeClient.run("anthropic-client.mjs", fixture.url(""), "unused", mode,
                params.toString()));
    }

    /** POSTs {@code body} as JSON, or with {@code headers} (which then say its Content-Type). */
    private static HttpResponse<String> post(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(fixture.url(path)))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        request.headers(headers.length > 0 ? headers : new String[] {"Content-Type", "application/json"});
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The thinking, the text and the call, in the order the model wrote them. */
    private static void assertTheBlocks(JsonNode message) {
        JsonNode content = message.get("content");
        assertEquals(3, content.size(), message.toString());
        assertEquals("thinking", content.get(0).get("type").textValue());
        assertEquals(THOUGHT, content.get(0).get("thinking").textValue());
        assertEquals("text", content.get(1).get("type").textValue());
        assertEquals(TEXT, content.get(1).get("text").textValue());
        JsonNode call = content.get(2);
        assertEquals("tool_use", call.get("type").textValue());
        assertTrue(call.get("id").textValue().startsWith("toolu_"), call.toString());
        assertEquals("get_weather", call.get("name").textValue());
        assertEquals(JSON.valueToTree(Map.of("city", "Paris", "days", 2)), call.get("input"));
        assertEquals("tool_use", message.get("stop_reason").textValue());
    }

    @Test
    void aCallIsAToolUseBlockAndItsResultGoesBackIntoThePrompt() throws Exception {
        JsonNode both = sdk("roundtrip", question());
        assertTheBlocks(both.get("first"));
        ObjectNode toolObject = JSON.createObjectNode().put("type", "function");
        toolObject.putObject("function").put("name", "get_weather").put("description", "The weather in a city")
                .set("parameters", weatherTool().get("input_schema"));
        List<ChatMessage> expected = List.of(ChatMessage.user("Weather in Paris?"),
                // In the order the model wrote them (Map.of's order changes from run to run).
                new ChatMessage("assistant", TEXT, THOUGHT, List.of(new ToolCall("get_weather",
                        JSON.createObjectNode().put("city", "Paris").put("days", 2)))),
                ChatMessage.tool("result of get_weather"));
        assertEquals(fixture.template.render(expected, List.of(toolObject), true, null),
                fixture.tokenizer.decode(engine.prompt, false));
    }

    @Test
    void aStreamedCallGrowsAsInputJsonDeltasIntoTheSameBlocks() throws Exception {
        JsonNode streamed = sdk("stream", question());
        assertTheBlocks(streamed.get("message"));
        List<String> kinds = new ArrayList<>();
        for (JsonNode event : streamed.get("events")) {
            String kind = event.textValue();
            if (kinds.isEmpty() || !kinds.getLast().equals(kind)) kinds.add(kind);
        }
        assertEquals(List.of("message_start",
                "content_block_start", "content_block_delta:thinking_delta", "content_block_stop",
                "content_block_start", "content_block_delta:text_delta", "content_block_stop",
                "content_block_start", "content_block_delta:input_json_delta", "content_block_stop",
                "message_delta", "message_stop"), kinds, streamed.get("events").toString());
        long fragments = streamed.get("events").valueStream()
                .filter(event -> event.textValue().endsWith("input_json_delta")).count();
        assertTrue(fragments > 2, "the input grows as the model writes it: " + fragments + " fragments");
    }

    @Test
    void toolChoiceNoneHidesTheToolsAndLeavesTheAnswerText() throws Exception {
        ObjectNode params = question();
        params.putObject("tool_choice").put("type", "none");
        JsonNode message = sdk("create", params);
        assertEquals(List.of("thinking", "text"), message.get("content").findValues("type").stream()
                .map(JsonNode::textValue).toList(), message.toString());
        assertEquals("end_turn", message.get("stop_reason").textValue());
        assertFalse(fixture.tokenizer.decode(engine.prompt, false).contains("<tools>"));
    }

    @Test
    void aStreamIsFramedAsNamedEvents() throws Exception {
        ObjectNode params = question().put("stream", true);
        HttpResponse<String> response = post("/v1/messages", params.toString(), "Content-Type", "application/json",
                "anthropic-version", "2023-06-01");
        assertEquals(200, response.statusCode());
        assertEquals("text/event-stream; charset=utf-8", response.headers().firstValue("Content-Type").orElse(""));
        String body = response.body();
        assertTrue(body.endsWith("\n\n"), body);
        String[] events = body.substring(0, body.length() - 2).split("\n\n", -1);
        StringBuilder input = new StringBuilder();
        for (String event : events) {
            String[] lines = event.split("\n", -1);
            assertEquals(2, lines.length, "an event line and a data line: " + event);
            assertTrue(lines[0].startsWith("event: ") && lines[1].startsWith("data: {"), event);
            JsonNode data = JSON.readTree(lines[1].substring("data: ".length()));
            assertEquals(lines[0].substring("event: ".length()), data.get("type").textValue(), event);
            if (data.at("/delta/type").asText().equals("input_json_delta")) {
                assertEquals(2, data.get("index").intValue(), event);
                input.append(data.at("/delta/partial_json").textValue());
            }
        }
        assertEquals(JSON.valueToTree(Map.of("city", "Paris", "days", 2)), JSON.readTree(input.toString()));
        JsonNode start = JSON.readTree(events[0].split("\n")[1].substring("data: ".length()));
        assertTrue(start.at("/message/stop_reason").isNull(), events[0]);
        assertEquals(0, start.at("/message/content").size(), events[0]);
        JsonNode delta = JSON.readTree(events[events.length - 2].split("\n")[1].substring("data: ".length()));
        assertEquals("tool_use", delta.at("/delta/stop_reason").textValue(), events[events.length - 2]);
        assertEquals(fixture.tokenizer.encode(ANSWER).length, delta.at("/usage/output_tokens").intValue());
    }

    /** An error in Anthropic's shape, with no stack trace; its error type. */
    private static String errorType(HttpResponse<String> response, int status) throws Exception {
        assertEquals(status, response.statusCode(), response.body());
        assertEquals("application/json", response.headers().firstValue("Content-Type").orElse(""));
        JsonNode body = JSON.readTree(response.body());
        assertEquals("error", body.get("type").textValue(), response.body());
        assertTrue(body.at("/error/message").textValue().length() > 10, response.body());
        assertFalse(response.body().contains("\tat "), "never a stack trace: " + response.body());
        return body.at("/error/type").textValue();
    }

    @Test
    void badRequestsAreAnsweredInAnthropicsErrorShape() throws Exception {
        assertEquals("invalid_request_error", errorType(post("/v1/messages", "{\"max_tokens\":5}"), 400));
        assertEquals("invalid_request_error", errorType(post("/v1/messages", "{\"max_tokens\":5,\"messages\":[{"
                + "\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{}}]}]}"), 400));
        assertEquals("invalid_request_error", errorType(post("/v1/messages", "{\"max_tokens\":5,\"messages\":[{"
                + "\"role\":\"system\",\"content\":\"Hi\"}]}"), 400));
        assertEquals("invalid_request_error", errorType(post("/v1/messages", "{\"max_tokens\":5,"
                + "\"tool_choice\":{\"type\":\"tool\",\"name\":\"nope\"},\"tools\":[" + weatherTool() + "],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"), 400));
        HttpResponse<String> badSchema = post("/v1/messages", "{\"max_tokens\":5,\"tools\":[{\"name\":\"f\","
                + "\"input_schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"frobnicate\"}}}}],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertEquals("invalid_request_error", errorType(badSchema, 400));
        assertTrue(badSchema.body().contains("'tools[0].input_schema' cannot be used"), badSchema.body());
        assertEquals("invalid_request_error", errorType(post("/v1/messages", "{not json"), 400));
        assertEquals("invalid_request_error", errorType(post("/v1/messages", "{}", "Content-Type", "text/plain"),
                415));
        assertHostIsCheckedFirst();
        assertEquals("not_found_error", errorType(post("/v1/messages/batches", "{}"), 404));
        HttpResponse<String> get = http.send(HttpRequest.newBuilder(URI.create(fixture.url("/v1/messages"))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals("invalid_request_error", errorType(get, 405));
    }

    /** A request naming another host (DNS rebinding) is refused in Anthropic's shape (raw: HttpClient sets Host). */
    private static void assertHostIsCheckedFirst() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", fixture.serverAddress().getPort())) {
            socket.getOutputStream().write(("POST /v1/messages HTTP/1.1\r\nHost: evil.example\r\nContent-Type: "
                    + "application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                    .getBytes(StandardCharsets.US_ASCII));
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(response.startsWith("HTTP/1.1 403 "), response);
            JsonNode body = JSON.readTree(response.substring(response.indexOf("\r\n\r\n") + 4));
            assertEquals("error", body.get("type").textValue(), response);
            assertEquals("permission_error", body.at("/error/type").textValue(), response);
        }
    }

    @Test
    void shutdownCutsARunningStreamWithAnErrorEvent() throws Exception {
        try (TestServer slow = TestServer.load(64)) {
            ApiServer server = slow.serve(new ScriptedEngine(slow.tokenizer.encode(TEXT.repeat(50)), 20), null);
            HttpRequest request = HttpRequest.newBuilder(URI.create(slow.url("/v1/messages")))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(question().put("stream", true).toString())).build();
            InputStream in = http.send(request, HttpResponse.BodyHandlers.ofInputStream()).body();
            in.read(); // the stream has started
            server.shutdown(Duration.ZERO);
            String rest = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rest.contains("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"
                    + "\"overloaded_error\""), rest);
            assertFalse(rest.contains("message_stop"), "a cut answer does not stop as a finished one");
            assertTrue(rest.endsWith("\n\n"), "the last event is whole");
        }
    }

    @Test
    void aFullQueueIsOverloadedWithRetryAfter() throws Exception {
        engine.full.set(true);
        try {
            HttpResponse<String> response = post("/v1/messages", question().toString());
            assertEquals("overloaded_error", errorType(response, 503));
            assertEquals("1", response.headers().firstValue("Retry-After").orElse(""));
        } finally {
            engine.full.set(false);
        }
    }
}
