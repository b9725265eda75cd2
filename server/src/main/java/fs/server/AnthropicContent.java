package fs.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.generate.ReasoningSplitter;
import fs.generate.ToolCallSplitter;
import java.io.IOException;
import java.util.List;

/**
 * An Anthropic answer's content blocks as the relay brings them: thinking, text and tool_use blocks in the order the
 * model wrote them (a new block wherever the kind changes). Streamed, each block goes out as it grows, as
 * content_block_start, content_block_delta (text_delta, thinking_delta, input_json_delta) and content_block_stop
 * events; either way {@link #blocks} holds them whole at the end, a tool_use's input as the object the model wrote.
 */
final class AnthropicContent implements AnswerRelay.Sink {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final EventStream events; // null: the answer is sent whole
    private final ArrayNode blocks = JSON.arrayNode();
    private ObjectNode open; // the block that grows now; null between blocks
    private final StringBuilder openText = new StringBuilder(); // a text or thinking block's text so far

    /** Blocks sent as events on {@code events}, or (null) only gathered. */
    AnthropicContent(EventStream events) {
        this.events = events;
    }

    @Override
    public void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) throws IOException {
        if (!delta.reasoning().isEmpty()) grow("thinking", delta.reasoning());
        if (!delta.content().isEmpty()) grow("text", delta.content());
    }

    @Override
    public void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries) throws IOException {
        switch (piece) {
            case ToolCallSplitter.Piece.Opened opened -> {
                ObjectNode block = JSON.objectNode();
                block.put("type", "tool_use");
                block.put("id", toolUseId(opened.id()));
                block.put("name", opened.name());
                block.putObject("input");
                start(block);
            }
            case ToolCallSplitter.Piece.Arguments arguments -> {
                ObjectNode delta = JSON.objectNode();
                delta.put("type", "input_json_delta");
                delta.put("partial_json", arguments.fragment());
                send(delta);
            }
            case ToolCallSplitter.Piece.Closed closed -> {
                open.set("input", input(closed.call().arguments()));
                stop();
            }
            case ToolCallSplitter.Piece.Text text -> grow("text", text.text());
        }
    }

    /** The blocks, whole: the last one is closed. */
    ArrayNode blocks() throws IOException {
        stop();
        return blocks;
    }

    /** More of a text or thinking block: the open one when it is of that kind, else a new one. */
    private void grow(String type, String text) throws IOException {
        if (open == null || !open.get("type").textValue().equals(type)) {
            ObjectNode block = JSON.objectNode();
            block.put("type", type);
            block.put(type, "");
            if (type.equals("thinking")) block.put("signature", ""); // fs does not sign its thinking
            start(block);
        }
        openText.append(text);
        ObjectNode delta = JSON.objectNode();
        delta.put("type", type + "_delta");
        delta.put(type, text);
        send(delta);
    }

    /** Opens {@code block}, the one before it closed. */
    private void start(ObjectNode block) throws IOException {
        stop();
        open = block;
        openText.setLength(0);
        if (events == null) return;
        ObjectNode event = event("content_block_start");
        event.set("content_block", block.deepCopy());
        events.send("content_block_start", event);
    }

    private void send(ObjectNode delta) throws IOException {
        if (events == null) return;
        ObjectNode event = event("content_block_delta");
        event.set("delta", delta);
        events.send("content_block_delta", event);
    }

    private void stop() throws IOException {
        if (open == null) return;
        String type = open.get("type").textValue();
        if (!type.equals("tool_use")) open.put(type, openText.toString());
        ObjectNode event = event("content_block_stop");
        blocks.add(open);
        open = null;
        if (events != null) events.send("content_block_stop", event);
    }

    /** An event about the open block: its type and the block's index (the blocks before it). */
    private ObjectNode event(String type) {
        ObjectNode event = JSON.objectNode();
        event.put("type", type);
        event.put("index", blocks.size());
        return event;
    }

    /** Anthropic's id for a call: "toolu_" and the call's random part. */
    private static String toolUseId(String callId) {
        return "toolu_" + callId.substring(callId.indexOf('_') + 1);
    }

    /**
     * A call's input: the object the model wrote; an empty object when it wrote none, or the answer's end cut its
     * arguments short (the stream carried what there was of them).
     */
    private static JsonNode input(String arguments) {
        try {
            JsonNode input = Exchange.WHOLE_JSON.readTree(arguments);
            return input != null && input.isObject() ? input : JSON.objectNode();
        } catch (JsonProcessingException e) {
            return JSON.objectNode();
        }
    }
}
