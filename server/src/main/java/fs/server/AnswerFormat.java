package fs.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.generate.ReasoningSplitter;
import java.util.UUID;

/**
 * OpenAI's two answer shapes: a chat completion ({@code chat.completion}, streamed as {@code chat.completion.chunk}
 * objects whose {@code delta} grows the message) and a text completion ({@code text_completion}, streamed as objects
 * of the same type, each with a piece of {@code text}). One instance per answer: it carries the answer's id and time.
 */
abstract sealed class AnswerFormat {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final String id;
    private final long created = System.currentTimeMillis() / 1000;
    private final String model;

    private AnswerFormat(String idPrefix, String model) {
        this.id = idPrefix + UUID.randomUUID().toString().replace("-", "");
        this.model = model;
    }

    static AnswerFormat chat(String model) {
        return new Chat(model);
    }

    static AnswerFormat text(String model) {
        return new Text(model);
    }

    /** The usage object: prompt tokens (of which {@code cached} were reused from the KV cache) and generated ones. */
    static ObjectNode usage(int promptTokens, int cachedTokens, int completionTokens) {
        ObjectNode usage = JSON.objectNode();
        usage.put("prompt_tokens", promptTokens);
        usage.put("completion_tokens", completionTokens);
        usage.put("total_tokens", promptTokens + completionTokens);
        usage.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
        return usage;
    }

    /** The first chunk of a stream, before any text; null when the format has none. */
    abstract ObjectNode start();

    /** A chunk with more of the answer. */
    abstract ObjectNode chunk(ReasoningSplitter.Delta delta);

    /** The last chunk with a choice: it carries the finish reason. */
    abstract ObjectNode end(String finishReason);

    /** The whole answer, with its usage. */
    abstract ObjectNode whole(String reasoning, String content, String finishReason, ObjectNode usage);

    /** The chunk after the last one when the client asked for usage: no choices, only the usage. */
    ObjectNode usageChunk(ObjectNode usage) {
        ObjectNode chunk = header(chunkType());
        chunk.putArray("choices");
        chunk.set("usage", usage);
        return chunk;
    }

    abstract String chunkType();

    ObjectNode header(String type) {
        ObjectNode node = JSON.objectNode();
        node.put("id", id);
        node.put("object", type);
        node.put("created", created);
        node.put("model", model);
        return node;
    }

    /** A chunk whose one choice is {@code choice}. */
    ObjectNode chunkWith(ObjectNode choice) {
        ObjectNode chunk = header(chunkType());
        chunk.putArray("choices").add(choice);
        return chunk;
    }

    static ObjectNode choice() {
        ObjectNode choice = JSON.objectNode();
        choice.put("index", 0);
        return choice;
    }

    private static final class Chat extends AnswerFormat {
        Chat(String model) {
            super("chatcmpl-", model);
        }

        @Override
        String chunkType() {
            return "chat.completion.chunk";
        }

        @Override
        ObjectNode start() {
            ObjectNode choice = choice();
            choice.putObject("delta").put("role", "assistant").put("content", "");
            choice.putNull("logprobs");
            choice.putNull("finish_reason");
            return chunkWith(choice);
        }

        @Override
        ObjectNode chunk(ReasoningSplitter.Delta delta) {
            ObjectNode choice = choice();
            ObjectNode message = choice.putObject("delta");
            if (!delta.reasoning().isEmpty()) message.put("reasoning_content", delta.reasoning());
            if (!delta.content().isEmpty()) message.put("content", delta.content());
            choice.putNull("logprobs");
            choice.putNull("finish_reason");
            return chunkWith(choice);
        }

        @Override
        ObjectNode end(String finishReason) {
            ObjectNode choice = choice();
            choice.putObject("delta");
            choice.putNull("logprobs");
            choice.put("finish_reason", finishReason);
            return chunkWith(choice);
        }

        @Override
        ObjectNode whole(String reasoning, String content, String finishReason, ObjectNode usage) {
            ObjectNode answer = header("chat.completion");
            ObjectNode choice = choice();
            ObjectNode message = choice.putObject("message");
            message.put("role", "assistant");
            message.put("content", content);
            if (!reasoning.isEmpty()) message.put("reasoning_content", reasoning);
            choice.putNull("logprobs");
            choice.put("finish_reason", finishReason);
            ArrayNode choices = answer.putArray("choices");
            choices.add(choice);
            answer.set("usage", usage);
            return answer;
        }
    }

    private static final class Text extends AnswerFormat {
        Text(String model) {
            super("cmpl-", model);
        }

        @Override
        String chunkType() {
            return "text_completion";
        }

        @Override
        ObjectNode start() {
            return null;
        }

        @Override
        ObjectNode chunk(ReasoningSplitter.Delta delta) {
            return chunkWith(textChoice(delta.reasoning() + delta.content(), null));
        }

        @Override
        ObjectNode end(String finishReason) {
            return chunkWith(textChoice("", finishReason));
        }

        @Override
        ObjectNode whole(String reasoning, String content, String finishReason, ObjectNode usage) {
            ObjectNode answer = header("text_completion");
            answer.putArray("choices").add(textChoice(reasoning + content, finishReason));
            answer.set("usage", usage);
            return answer;
        }

        private static ObjectNode textChoice(String text, String finishReason) {
            ObjectNode choice = choice();
            choice.put("text", text);
            choice.putNull("logprobs");
            choice.put("finish_reason", finishReason);
            return choice;
        }
    }
}
