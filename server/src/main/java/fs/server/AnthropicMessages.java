package fs.server;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.UUID;

/**
 * Answers Anthropic's Messages API, {@code POST /v1/messages} and {@code POST /v1/messages/count_tokens}: reads its
 * request ({@link AnthropicRequest}), submits it through the {@link AnswerRelay} and writes the answer as a message
 * object, or streamed as its typed server-sent events (message_start, the content blocks' events, message_delta,
 * message_stop); every error of these routes in its shape ({@link #errorBody}).
 */
final class AnthropicMessages {
    static final String MESSAGES = "/v1/messages";
    static final String COUNT_TOKENS = "/v1/messages/count_tokens";

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final ServerMetrics metrics;
    private final AnswerConstraints constraints;

    AnthropicMessages(ServerMetrics metrics, AnswerConstraints constraints) {
        this.metrics = metrics;
        this.constraints = constraints;
    }

    /** Whether the path is one of this API's (its errors then come in its shape, unknown ones as not_found_error). */
    static boolean owns(String path) {
        return path.equals(MESSAGES) || path.startsWith(MESSAGES + "/");
    }

    /** Anthropic's error object: {@code {"type":"error","error":{"type","message"}}}, the type from the status. */
    static ObjectNode errorBody(ApiException error) {
        ObjectNode body = JSON.objectNode();
        body.put("type", "error");
        ObjectNode inner = body.putObject("error");
        inner.put("type", switch (error.status) {
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 413 -> "request_too_large";
            case 429 -> "rate_limit_error";
            // Anthropic's overloaded status is 529; a full queue or a loading model keeps HTTP's 503 + Retry-After.
            case 503 -> "overloaded_error";
            default -> error.status >= 500 ? "api_error" : "invalid_request_error";
        });
        inner.put("message", error.getMessage());
        return body;
    }

    /** Answers a message request. */
    CompletionHandler.Outcome message(Exchange exchange, ServedModel served) throws IOException {
        CompletionRequest request = AnthropicRequest.message(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES));
        AnswerRelay relay = AnswerRelay.submit(served, request, "messages", constraints, metrics);
        ObjectNode message = JSON.objectNode();
        message.put("id", "msg_" + UUID.randomUUID().toString().replace("-", ""));
        message.put("type", "message");
        message.put("role", "assistant");
        message.put("model", served.id());
        return relay.write(() -> request.stream() ? stream(exchange, message, relay) : whole(exchange, message, relay),
                AnthropicMessages::stopReason);
    }

    /** Answers a count_tokens request: the prompt's tokens as the model would read them, tools included. */
    void countTokens(Exchange exchange, ServedModel served) throws IOException {
        CompletionRequest request =
                AnthropicRequest.countTokens(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES));
        served.requireNamed(request.model());
        ObjectNode count = JSON.objectNode();
        count.put("input_tokens", AnswerRelay.promptIds(served, request.prompt(), request.tools(), "messages").length);
        exchange.sendJson(200, count);
    }

    private static AnswerRelay.Finish whole(Exchange exchange, ObjectNode message, AnswerRelay relay)
            throws IOException, InterruptedException {
        AnthropicContent content = new AnthropicContent(null);
        AnswerRelay.Finish finish = relay.relay(exchange, content);
        if (!finish.ended()) throw finish.failure();
        message.set("content", content.blocks());
        message.put("stop_reason", stopReason(finish.end()));
        message.put("stop_sequence", finish.stopString());
        message.set("usage", usage(relay.promptTokens(), finish.stats().cachedTokens(), finish.tokens()));
        exchange.sendJson(200, message);
        return finish;
    }

    private static AnswerRelay.Finish stream(Exchange exchange, ObjectNode message, AnswerRelay relay)
            throws IOException, InterruptedException {
        EventStream events = exchange.openEventStream();
        ObjectNode start = event("message_start");
        ObjectNode started = start.putObject("message").setAll(message);
        started.set("content", JSON.arrayNode());
        started.putNull("stop_reason");
        started.putNull("stop_sequence");
        // What of the prompt the cache held is known at the end: message_delta tells it.
        started.set("usage", usage(relay.promptTokens(), 0, 0));
        events.send("message_start", start);
        AnthropicContent content = new AnthropicContent(events);
        AnswerRelay.Finish finish = relay.relay(exchange, content);
        if (!finish.ended()) {
            // The headers are gone: the error travels as an error event, as Anthropic streams errors.
            events.send("error", errorBody(finish.failure()));
            exchange.complete();
            return finish;
        }
        content.blocks(); // the last block's content_block_stop
        ObjectNode delta = event("message_delta");
        delta.putObject("delta").put("stop_reason", stopReason(finish.end()))
                .put("stop_sequence", finish.stopString());
        delta.set("usage", usage(relay.promptTokens(), finish.stats().cachedTokens(), finish.tokens()));
        events.send("message_delta", delta);
        events.send("message_stop", event("message_stop"));
        exchange.complete();
        return finish;
    }

    /**
     * Anthropic's usage: input_tokens the prompt's tokens that were not read from the cache (as Anthropic counts,
     * the prompt is input_tokens + cache_read_input_tokens), and the answer's tokens.
     */
    private static ObjectNode usage(int promptTokens, int cachedTokens, int outputTokens) {
        ObjectNode usage = JSON.objectNode();
        usage.put("input_tokens", promptTokens - cachedTokens);
        usage.put("cache_read_input_tokens", cachedTokens);
        usage.put("output_tokens", outputTokens);
        return usage;
    }

    private static String stopReason(AnswerRelay.End end) {
        return switch (end) {
            case END_OF_TURN -> "end_turn";
            case STOP_STRING -> "stop_sequence";
            case LENGTH -> "max_tokens";
            case TOOL_CALLS -> "tool_use";
        };
    }

    private static ObjectNode event(String type) {
        ObjectNode event = JSON.objectNode();
        event.put("type", type);
        return event;
    }
}
