package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.chat.ChatMessage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Anthropic's official TypeScript SDK (@anthropic-ai/sdk 1.17.0, pinned in server/src/test/node/package.json)
 * through anthropic-client.mjs against the server on models/tiny-tied, which wants an API key: a message and a stream
 * carry the text of the tokens the existing Generator picks greedily, a stop sequence ends it and is named,
 * count_tokens counts the prompt the template renders, and errors reach the SDK as its error classes.
 */
class AnthropicSdkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY = "sk-test-key";
    private static final int MAX_TOKENS = 6;
    private static final String QUESTION = "Why is the sky blue?";
    private static final ObjectNode WEATHER = (ObjectNode) JSON.valueToTree(Map.of("name", "get_weather",
            "description", "The weather in a city", "input_schema", Map.of("type", "object",
                    "properties", Map.of("city", Map.of("type", "string")), "required", List.of("city"))));

    private static TestServer fixture;
    private static String answer; // greedy, thinking off
    private static int promptTokens; // thinking off
    private static int defaultPromptTokens; // the template's default thinking
    private static int toolsPromptTokens;

    @BeforeAll
    static void start() {
        fixture = TestServer.load(256);
        int[] prompt = fixture.chatPrompt(QUESTION, false);
        promptTokens = prompt.length;
        answer = fixture.text(fixture.greedy(prompt, MAX_TOKENS).ids());
        assertTrue(answer.length() > 4, "the reference must have text to cut: " + answer);
        defaultPromptTokens = fixture.chatPrompt(QUESTION, null).length;
        // The tool as OpenAI's tool object, its keys in the order the server writes them.
        ObjectNode openAiTool = JSON.createObjectNode().put("type", "function");
        openAiTool.putObject("function").put("name", "get_weather").put("description", "The weather in a city")
                .set("parameters", WEATHER.get("input_schema"));
        toolsPromptTokens = fixture.tokenizer.encode(fixture.template.render(List.of(ChatMessage.user(QUESTION)),
                List.of(openAiTool), true, null)).length;
        fixture.serve(fixture.schedulerEngine(2, 4), KEY);
    }

    @AfterAll
    static void stop() {
        if (fixture != null) fixture.close();
    }

    private static ObjectNode question() {
        ObjectNode params = JSON.createObjectNode();
        params.put("model", TestServer.MODEL_ID);
        params.put("max_tokens", MAX_TOKENS);
        params.put("temperature", 0);
        params.putArray("messages").addObject().put("role", "user").put("content", QUESTION);
        params.putObject("thinking").put("type", "disabled");
        return params;
    }

    private static JsonNode sdk(String mode, JsonNode params) throws Exception {
        return sdk(KEY, mode, params);
    }

    private static JsonNode sdk(String key, String mode, JsonNode params) throws Exception {
        return JSON.readTree(NodeClient.run("anthropic-client.mjs", fixture.url(""), key, mode, params.toString()));
    }

    /** The text of a message's text blocks. */
    private static String text(JsonNode message) {
        StringBuilder text = new StringBuilder();
        for (JsonNode block : message.get("content")) {
            if (block.get("type").textValue().equals("text")) text.append(block.get("text").textValue());
        }
        return text.toString();
    }

    @Test
    void aMessageIsTheGreedyAnswer() throws Exception {
        JsonNode message = sdk("create", question());
        assertEquals("message", message.get("type").textValue(), message.toString());
        assertEquals("assistant", message.get("role").textValue());
        assertTrue(message.get("id").textValue().startsWith("msg_"), message.toString());
        assertEquals(TestServer.MODEL_ID, message.get("model").textValue());
        assertEquals(answer, text(message));
        assertEquals("max_tokens", message.get("stop_reason").textValue());
        assertTrue(message.get("stop_sequence").isNull());
        JsonNode usage = message.get("usage");
        assertEquals(MAX_TOKENS, usage.get("output_tokens").intValue());
        assertEquals(promptTokens, usage.get("input_tokens").intValue()
                + usage.get("cache_read_input_tokens").intValue(), "thinking disabled renders the empty think block");
    }

    @Test
    void aStreamsTextPiecesMakeTheWholeMessageInEventOrder() throws Exception {
        JsonNode streamed = sdk("stream", question());
        List<String> events = JSON.convertValue(streamed.get("events"), JSON.getTypeFactory()
                .constructCollectionType(List.class, String.class));
        assertEquals("message_start", events.getFirst(), events.toString());
        assertEquals("content_block_start", events.get(1), events.toString());
        assertEquals(List.of("content_block_stop", "message_delta", "message_stop"),
                events.subList(events.size() - 3, events.size()), events.toString());
        assertTrue(events.subList(2, events.size() - 3).stream().allMatch("content_block_delta:text_delta"::equals),
                events.toString());
        StringBuilder pieces = new StringBuilder();
        streamed.get("pieces").forEach(piece -> pieces.append(piece.textValue()));
        assertTrue(streamed.get("pieces").size() > 1, "the text comes in pieces: " + streamed.get("pieces"));
        assertEquals(answer, pieces.toString());
        JsonNode message = streamed.get("message");
        assertEquals(answer, text(message));
        assertEquals("max_tokens", message.get("stop_reason").textValue());
        assertEquals(MAX_TOKENS, message.at("/usage/output_tokens").intValue());
        assertEquals(promptTokens, message.at("/usage/input_tokens").intValue()
                + message.at("/usage/cache_read_input_tokens").intValue());
    }

    @Test
    void aStopSequenceEndsTheAnswerAndIsNamed() throws Exception {
        String stop = answer.substring(answer.length() / 2, answer.length() / 2 + 2);
        ObjectNode params = question();
        params.putArray("stop_sequences").add("never in the answer").add(stop);
        JsonNode message = sdk("create", params);
        assertEquals(answer.substring(0, answer.indexOf(stop)), text(message));
        assertEquals("stop_sequence", message.get("stop_reason").textValue(), message.toString());
        assertEquals(stop, message.get("stop_sequence").textValue());
        JsonNode streamed = sdk("stream", params).get("message");
        assertEquals("stop_sequence", streamed.get("stop_reason").textValue(), streamed.toString());
        assertEquals(stop, streamed.get("stop_sequence").textValue());
    }

    @Test
    void countTokensCountsThePromptTheTemplateRenders() throws Exception {
        ObjectNode params = question();
        params.remove("max_tokens");
        assertEquals(promptTokens, sdk("count", params).get("input_tokens").intValue());
        params.remove("thinking");
        assertEquals(defaultPromptTokens, sdk("count", params).get("input_tokens").intValue());
        params.putArray("tools").add(WEATHER);
        assertEquals(toolsPromptTokens, sdk("count", params).get("input_tokens").intValue(), "the tools are shown");
    }

    @Test
    void errorsReachTheSdkAsItsErrorClasses() throws Exception {
        ObjectNode noLimit = question();
        noLimit.remove("max_tokens");
        JsonNode error = sdk("create", noLimit).get("error");
        assertEquals("BadRequestError", error.get("class").textValue(), error.toString());
        assertEquals(400, error.get("status").intValue());
        assertEquals("invalid_request_error", error.get("type").textValue());
        assertTrue(error.get("message").textValue().contains("max_tokens"), error.toString());

        JsonNode wrongKey = sdk("not-the-key", "create", question()).get("error");
        assertEquals("AuthenticationError", wrongKey.get("class").textValue(), wrongKey.toString());
        assertEquals("authentication_error", wrongKey.get("type").textValue());

        JsonNode otherModel = sdk("create", question().put("model", "claude-sonnet-4-5")).get("error");
        assertEquals("NotFoundError", otherModel.get("class").textValue(), otherModel.toString());
        assertEquals("not_found_error", otherModel.get("type").textValue());
    }

    @Test
    void theKeyIsTakenAsBearerOrXApiKey() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        for (String[] auth : List.of(new String[] {"Authorization", "Bearer " + KEY},
                new String[] {"x-api-key", KEY}, new String[] {"x-api-key", KEY + "x"}, new String[0])) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(fixture.url("/v1/messages/count_tokens")))
                    .header("Content-Type", "application/json").header("anthropic-version", "2023-06-01")
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (auth.length > 0) request.header(auth[0], auth[1]);
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            boolean right = auth.length > 0 && auth[1].endsWith(KEY);
            assertEquals(right ? 200 : 401, response.statusCode(), response.body());
            if (!right) {
                JsonNode error = JSON.readTree(response.body());
                assertEquals("error", error.get("type").textValue(), response.body());
                assertEquals("authentication_error", error.at("/error/type").textValue(), response.body());
            }
        }
    }
}
