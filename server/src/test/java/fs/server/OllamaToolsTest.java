package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.ollama.OllamaChatModel;
import fs.chat.ToolCall;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Thinking and tool calls through Ollama's API, on a scripted engine that answers as Qwen3 does when it thinks and
 * calls: Ollama's official JavaScript client (npm ollama 0.6.4, pinned in server/src/test/node/package.json) and
 * LangChain4j's Ollama chat model (langchain4j-ollama 1.18.1) get the thinking apart from the text and the call with
 * its arguments as an object, whole and streamed, and send the tool's result back into the prompt as the chat template
 * renders it; {@code think: false} turns the template's thinking off; a full queue and a shutdown answer in Ollama's
 * error shape.
 */
class OllamaToolsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String THOUGHT = "The user asks about Paris.";
    private static final String TEXT = "Let me check.";
    private static final String ANSWER = "<think>\n" + THOUGHT + "\n</think>\n\n" + TEXT + "\n<tool_call>\n"
            + "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    private static final String NAME = TestServer.MODEL_ID + ":latest";

    private static TestServer fixture;
    private static ScriptedEngine engine;

    @BeforeAll
    static void start() {
        fixture = TestServer.load(256);
        engine = new ScriptedEngine(fixture.tokenizer.encode(ANSWER), 0);
        fixture.serve(engine, null);
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static JsonNode weatherTool() {
        return JSON.valueToTree(Map.of("type", "function", "function", Map.of("name", "get_weather",
                "description", "The weather in a city", "parameters", Map.of("type", "object",
                        "properties", Map.of("city", Map.of("type", "string")), "required", List.of("city")))));
    }

    private static final JsonNode PARIS = JSON.valueToTree(Map.of("city", "Paris"));

    /** The prompt after the tools block, as the server rendered it and as the template renders {@code messages}. */
    private static void assertPromptAfterTools(List<fs.chat.ChatMessage> messages) {
        String prompt = fixture.tokenizer.decode(engine.prompt, false);
        String rendered = fixture.template.render(messages, List.of(weatherTool()), true, null);
        // A client may order the tool's keys its own way: compare the conversation after the tools block.
        assertEquals(rendered.substring(rendered.lastIndexOf("</tools>")), prompt.substring(prompt.lastIndexOf(
                "</tools>")));
        assertTrue(prompt.contains("\"name\": \"get_weather\""), prompt);
    }

    @Test
    void theJavaScriptClientsCallRoundTrip() throws Exception {
        JsonNode out = JSON.readTree(NodeClient.run("ollama-client.mjs", fixture.url(""), "tools", NAME));

        JsonNode call = out.get("call");
        assertEquals(THOUGHT, call.get("message").get("thinking").asText());
        assertEquals(TEXT, call.get("message").get("content").asText(), "the text before the call is the content");
        JsonNode calls = call.get("message").get("tool_calls");
        assertEquals(1, calls.size(), call.toString());
        assertEquals("get_weather", calls.get(0).get("function").get("name").asText());
        assertEquals(PARIS, calls.get(0).get("function").get("arguments"), "the arguments as an object");
        assertEquals("stop", call.get("done_reason").asText());

        JsonNode pieces = out.get("callStream");
        StringBuilder thinking = new StringBuilder();
        StringBuilder content = new StringBuilder();
        JsonNode streamedCall = null;
        for (JsonNode piece : pieces) {
            thinking.append(piece.get("message").path("thinking").asText());
            content.append(piece.get("message").get("content").asText());
            if (piece.get("message").has("tool_calls")) {
                assertEquals(null, streamedCall, "one call, sent once: " + pieces);
                streamedCall = piece.get("message").get("tool_calls");
            }
        }
        assertEquals(THOUGHT, thinking.toString());
        assertEquals(TEXT, content.toString());
        assertEquals(calls, streamedCall, "the streamed call is the whole answer's");
        assertTrue(pieces.get(pieces.size() - 1).get("done").asBoolean());

        assertPromptAfterTools(List.of(fs.chat.ChatMessage.user("Weather in Paris?"),
                new fs.chat.ChatMessage("assistant", TEXT, THOUGHT, List.of(new ToolCall("get_weather", PARIS))),
                fs.chat.ChatMessage.tool("sunny")));
        assertEquals(calls, out.get("afterResult").get("message").get("tool_calls"),
                "the scripted model calls again");
    }

    @Test
    void langChain4jsOllamaChatModelCallsTheToolAndSendsItsResult() {
        OllamaChatModel model = OllamaChatModel.builder().baseUrl(fixture.url("")).modelName(NAME)
                .timeout(Duration.ofSeconds(60)).maxRetries(0).build();
        ToolSpecification weather = ToolSpecification.builder().name("get_weather")
                .description("The weather in a city")
                .parameters(JsonObjectSchema.builder().addStringProperty("city").required("city").build()).build();
        UserMessage question = UserMessage.from("Weather in Paris?");
        AiMessage answer = model.chat(ChatRequest.builder().messages(question).toolSpecifications(weather).build())
                .aiMessage();
        assertEquals(1, answer.toolExecutionRequests().size(), answer.toString());
        ToolExecutionRequest request = answer.toolExecutionRequests().getFirst();
        assertEquals("get_weather", request.name());
        assertEquals(PARIS, json(request.arguments()));

        List<ChatMessage> conversation = List.of(question, answer,
                ToolExecutionResultMessage.from(request, "sunny"));
        model.chat(ChatRequest.builder().messages(conversation).toolSpecifications(weather).build());
        assertPromptAfterTools(List.of(fs.chat.ChatMessage.user("Weather in Paris?"),
                new fs.chat.ChatMessage("assistant", answer.text() != null ? answer.text() : "", null,
                        List.of(new ToolCall("get_weather", PARIS))),
                fs.chat.ChatMessage.tool("sunny")));
    }

    @Test
    void thinkFalseTurnsTheTemplatesThinkingOff() throws Exception {
        String body = "{\"model\":\"" + NAME + "\",\"stream\":false,\"think\":false,\"messages\":[{\"role\":"
                + "\"user\",\"content\":\"Hi\"}]}";
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(fixture.url("/api/chat")))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), response.body());
        }
        assertEquals(fixture.template.render(List.of(fs.chat.ChatMessage.user("Hi")), true, false),
                fixture.tokenizer.decode(engine.prompt, false));
    }

    @Test
    void shutdownCutsARunningStreamWithAnErrorLine() throws Exception {
        try (TestServer slow = TestServer.load(64); HttpClient http = HttpClient.newHttpClient()) {
            ApiServer server = slow.serve(new ScriptedEngine(slow.tokenizer.encode(TEXT.repeat(50)), 20), null);
            HttpRequest request = HttpRequest.newBuilder(URI.create(slow.url("/api/generate")))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + NAME + "\",\"prompt\":\"Hi\"}"))
                    .build();
            InputStream in = http.send(request, HttpResponse.BodyHandlers.ofInputStream()).body();
            in.read(); // the stream has started
            server.shutdown(Duration.ZERO);
            String[] lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n");
            JsonNode last = JSON.readTree(lines[lines.length - 1]);
            assertTrue(last.get("error").asText().contains("shutting down"), last.toString());
            for (int i = 0; i < lines.length - 1; i++) {
                assertFalse(lines[i].contains("\"done\":true"), "a cut answer is not done: " + lines[i]);
            }
        }
    }

    @Test
    void aFullQueueIsA503WithRetryAfter() throws Exception {
        engine.full.set(true);
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(fixture.url("/api/chat")))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                            "{\"model\":\"" + NAME + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(503, response.statusCode(), response.body());
            assertEquals("1", response.headers().firstValue("Retry-After").orElse(""));
            assertTrue(JSON.readTree(response.body()).get("error").isTextual(), response.body());
        } finally {
            engine.full.set(false);
        }
    }

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(text, e);
        }
    }
}
