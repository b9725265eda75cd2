package fs.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.generate.ReasoningSplitter;
import fs.generate.ToolCallSplitter;
import java.io.IOException;
import java.util.UUID;

/**
 * One answer in the Responses API's shapes: its output items as the answer grows (a {@code reasoning} item for the
 * model's thoughts, a {@code message} with one {@code output_text} part for its text, a {@code function_call} per
 * call, each a new item whenever the kind changes), the {@code response} object, and, for a streamed answer, the
 * typed events that tell each step (numbered by {@code sequence_number}). Used by the request's own thread only.
 */
final class ResponsesAnswer {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    /** Where the typed events go: the event stream, or nowhere for an answer sent whole. */
    @FunctionalInterface
    interface Events {
        Events NONE = (type, event) -> {};

        void send(String type, ObjectNode event) throws IOException;
    }

    private final String id = id("resp_");
    private final long createdAt = System.currentTimeMillis() / 1000;
    private final String model;
    private final ObjectNode echo;
    private final Events events;
    private final ArrayNode output = JSON.arrayNode();
    private final StringBuilder reasoning = new StringBuilder(); // all of it, for its count of tokens
    private int sequence;
    private ObjectNode open; // the item growing now; null when none
    private final StringBuilder openText = new StringBuilder(); // its text, or its call's arguments

    /** An answer of {@code model} to a request whose settings are {@code echo} ({@link ResponsesRequest#echo}). */
    ResponsesAnswer(String model, ObjectNode echo, Events events) {
        this.model = model;
        this.echo = echo;
        this.events = events;
    }

    /** The events that open a stream: the response is created and in progress, with no output yet. */
    void start() throws IOException {
        send("response.created", JSON.objectNode().set("response", response("in_progress", null)));
        send("response.in_progress", JSON.objectNode().set("response", response("in_progress", null)));
    }

    /** More of the answer: its reasoning grows the reasoning item, its content the message. */
    void text(ReasoningSplitter.Delta delta) throws IOException {
        if (!delta.reasoning().isEmpty()) {
            reasoning.append(delta.reasoning());
            grow("reasoning", "response.reasoning_text.delta", delta.reasoning());
        }
        if (!delta.content().isEmpty()) grow("message", "response.output_text.delta", delta.content());
    }

    /** A piece of a call: it opens a function_call item, grows its arguments, closes it. */
    void callPiece(ToolCallSplitter.Piece piece) throws IOException {
        switch (piece) {
            case ToolCallSplitter.Piece.Opened opened -> {
                close("completed");
                ObjectNode item = JSON.objectNode();
                item.put("id", id("fc_"));
                item.put("type", "function_call");
                item.put("status", "in_progress");
                item.put("arguments", "");
                item.put("call_id", opened.id());
                item.put("name", opened.name());
                open(item);
            }
            case ToolCallSplitter.Piece.Arguments arguments -> {
                openText.append(arguments.fragment());
                ObjectNode event = itemEvent();
                event.put("delta", arguments.fragment());
                send("response.function_call_arguments.delta", event);
            }
            case ToolCallSplitter.Piece.Closed closed -> close(closed.complete() ? "completed" : "incomplete");
            case ToolCallSplitter.Piece.Text _ -> throw new IllegalArgumentException("text is no part of a call");
        }
    }

    /** The reasoning's text so far. */
    String reasoning() {
        return reasoning.toString();
    }

    /**
     * The answer ended: the open item closes, and the response, completed (or incomplete when the token limit cut
     * it), is the last event; returns it.
     */
    ObjectNode finish(AnswerRelay.End end, ObjectNode usage) throws IOException {
        boolean cut = end == AnswerRelay.End.LENGTH;
        close(cut ? "incomplete" : "completed");
        ObjectNode response = response(cut ? "incomplete" : "completed", usage);
        if (cut) response.putObject("incomplete_details").put("reason", "max_output_tokens");
        else response.put("completed_at", System.currentTimeMillis() / 1000);
        send(cut ? "response.incomplete" : "response.completed", JSON.objectNode().set("response", response));
        return response;
    }

    /** The answer did not end (the server shuts down, or the generation failed): an error event, then the failure. */
    void fail(ApiException error, ObjectNode usage) throws IOException {
        close("incomplete");
        ObjectNode event = JSON.objectNode();
        event.put("code", error.code);
        event.put("message", error.getMessage());
        event.put("param", error.param);
        send("error", event);
        ObjectNode response = response("failed", usage);
        response.putObject("error").put("code", "server_error").put("message", error.getMessage());
        send("response.failed", JSON.objectNode().set("response", response));
    }

    /** The response object: its state, the output so far and the request's settings. */
    private ObjectNode response(String status, ObjectNode usage) {
        ObjectNode response = JSON.objectNode();
        response.put("id", id);
        response.put("object", "response");
        response.put("created_at", createdAt);
        response.put("status", status);
        response.put("background", false);
        response.putNull("completed_at");
        response.putNull("error");
        response.putNull("incomplete_details");
        response.put("model", model);
        response.set("output", output.deepCopy());
        response.putNull("previous_response_id");
        response.put("store", false); // stateless: nothing is kept, whatever the request said
        response.setAll(echo.deepCopy());
        response.set("usage", usage);
        return response;
    }

    /** Adds text to the open item of {@code type}, opening one (and closing another) first when needed. */
    private void grow(String type, String deltaEvent, String text) throws IOException {
        if (open == null || !open.get("type").textValue().equals(type)) {
            close("completed");
            ObjectNode item = JSON.objectNode();
            if (type.equals("message")) {
                item.put("id", id("msg_"));
                item.put("type", "message");
                item.put("status", "in_progress");
                item.putArray("content");
                item.put("role", "assistant");
            } else {
                item.put("id", id("rs_"));
                item.put("type", "reasoning");
                item.put("status", "in_progress");
                item.putArray("summary");
                item.putArray("content");
            }
            open(item);
            ObjectNode added = partEvent();
            added.set("part", part(""));
            send("response.content_part.added", added);
        }
        openText.append(text);
        ObjectNode event = partEvent();
        event.put("delta", text);
        if (type.equals("message")) event.putArray("logprobs");
        send(deltaEvent, event);
    }

    private void open(ObjectNode item) throws IOException {
        open = item;
        openText.setLength(0);
        ObjectNode event = JSON.objectNode();
        event.put("output_index", output.size());
        event.set("item", item);
        send("response.output_item.added", event);
    }

    /** Closes the open item, if any, with {@code status}: its text or arguments are whole now. */
    private void close(String status) throws IOException {
        if (open == null) return;
        String text = openText.toString();
        switch (open.get("type").textValue()) {
            case "function_call" -> {
                ObjectNode done = itemEvent();
                done.put("name", open.get("name").textValue());
                done.put("arguments", text);
                send("response.function_call_arguments.done", done);
                open.put("arguments", text);
            }
            case "message", "reasoning" -> {
                boolean message = open.get("type").textValue().equals("message");
                ObjectNode done = partEvent();
                done.put("text", text);
                if (message) done.putArray("logprobs");
                send(message ? "response.output_text.done" : "response.reasoning_text.done", done);
                ObjectNode partDone = partEvent();
                partDone.set("part", part(text));
                send("response.content_part.done", partDone);
                ((ArrayNode) open.get("content")).add(part(text));
            }
            default -> throw new IllegalStateException("an item of type " + open.get("type"));
        }
        open.put("status", status);
        ObjectNode event = JSON.objectNode();
        event.put("output_index", output.size());
        event.set("item", open);
        output.add(open);
        open = null;
        send("response.output_item.done", event);
    }

    /** The open item's content part with {@code text}: output_text for a message, reasoning_text for reasoning. */
    private ObjectNode part(String text) {
        ObjectNode part = JSON.objectNode();
        if (open.get("type").textValue().equals("message")) {
            part.put("type", "output_text");
            part.putArray("annotations");
            part.putArray("logprobs");
        } else {
            part.put("type", "reasoning_text");
        }
        part.put("text", text);
        return part;
    }

    /** An event about the open item. */
    private ObjectNode itemEvent() {
        ObjectNode event = JSON.objectNode();
        event.put("item_id", open.get("id").textValue());
        event.put("output_index", output.size());
        return event;
    }

    /** An event about the open item's (one) content part. */
    private ObjectNode partEvent() {
        ObjectNode event = itemEvent();
        event.put("content_index", 0);
        return event;
    }

    private void send(String type, ObjectNode fields) throws IOException {
        ObjectNode event = JSON.objectNode();
        event.put("type", type);
        event.put("sequence_number", sequence++);
        event.setAll(fields);
        events.send(type, event);
    }

    /** The usage object: input tokens (of which {@code cached} were reused), output tokens (of which reasoning). */
    static ObjectNode usage(int inputTokens, int cachedTokens, int outputTokens, int reasoningTokens) {
        ObjectNode usage = JSON.objectNode();
        usage.put("input_tokens", inputTokens);
        usage.putObject("input_tokens_details").put("cached_tokens", cachedTokens);
        usage.put("output_tokens", outputTokens);
        usage.putObject("output_tokens_details").put("reasoning_tokens", reasoningTokens);
        usage.put("total_tokens", inputTokens + outputTokens);
        return usage;
    }

    private static String id(String prefix) {
        return prefix + UUID.randomUUID().toString().replace("-", "");
    }
}
