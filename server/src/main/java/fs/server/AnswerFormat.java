package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.generate.ReasoningSplitter;
import fs.generate.ToolCallSplitter;
import java.util.List;
import java.util.UUID;

/**
 * OpenAI's two answer shapes: a chat completion ({@code chat.completion}, streamed as {@code chat.completion.chunk}
 * objects whose {@code delta} grows the message) and a text completion ({@code text_completion}, streamed as objects
 * of the same type, each with a piece of {@code text}). One instance per answer: it carries the answer's id and time,
 * and whether the answer reports logprobs (each chunk then carries the entries of the tokens whose text it brings, in
 * the endpoint's shape; {@code logprobs} is null otherwise).
 */
abstract sealed class AnswerFormat {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final String id;
    private final long created = System.currentTimeMillis() / 1000;
    private final String model;
    private final boolean logprobs;

    private AnswerFormat(String idPrefix, String model, boolean logprobs) {
        this.id = idPrefix + UUID.randomUUID().toString().replace("-", "");
        this.model = model;
        this.logprobs = logprobs;
    }

    /** A chat answer; with {@code logprobs}, each choice carries {@code logprobs.content}. */
    static AnswerFormat chat(String model, boolean logprobs) {
        return new Chat(model, logprobs);
    }

    /** A text answer; with {@code logprobs}, each choice carries the legacy logprobs object. */
    static AnswerFormat text(String model, boolean logprobs) {
        return new Text(model, logprobs);
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

    /** A chunk with more of the answer and the logprobs of the tokens it brings. */
    abstract ObjectNode chunk(ReasoningSplitter.Delta delta, List<LogprobEntry> entries);

    /** The last chunk with a choice: it carries the finish reason and the logprobs not sent yet. */
    abstract ObjectNode end(String finishReason, List<LogprobEntry> entries);

    /**
     * The chunk that brings a piece of the call at {@code index} of a chat answer, as OpenAI streams calls: its
     * opening names it (with empty arguments), then each fragment of its arguments; its close brings nothing (null)
     * unless logprobs wait for a chunk, which then carries them with an empty delta.
     */
    final ObjectNode toolCallChunk(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries) {
        ObjectNode choice = choice();
        ObjectNode delta = choice.putObject("delta");
        switch (piece) {
            case ToolCallSplitter.Piece.Opened opened -> {
                ObjectNode call = delta.putArray("tool_calls").addObject();
                call.put("index", index);
                call.put("id", opened.id());
                call.put("type", "function");
                call.putObject("function").put("name", opened.name()).put("arguments", "");
            }
            case ToolCallSplitter.Piece.Arguments arguments -> {
                ObjectNode call = delta.putArray("tool_calls").addObject();
                call.put("index", index);
                call.putObject("function").put("arguments", arguments.fragment());
            }
            case ToolCallSplitter.Piece.Closed _ -> {
                if (entries.isEmpty()) return null;
            }
            case ToolCallSplitter.Piece.Text _ -> throw new IllegalArgumentException("text is no part of a call");
        }
        choice.set("logprobs", logprobsNode(entries));
        choice.putNull("finish_reason");
        return chunkWith(choice);
    }

    /**
     * The whole answer, with its usage and the logprobs of all its tokens; a chat answer also with the calls it made
     * (a text answer never has any).
     */
    abstract ObjectNode whole(String reasoning, String content, List<ToolCallSplitter.Call> calls,
            String finishReason, ObjectNode usage, List<LogprobEntry> entries);

    /** The choice's {@code logprobs}: null when not asked for, else the endpoint's object holding {@code entries}. */
    final JsonNode logprobsNode(List<LogprobEntry> entries) {
        return logprobs ? logprobsObject(entries) : JSON.nullNode();
    }

    /** The endpoint's logprobs object for {@code entries}. */
    abstract ObjectNode logprobsObject(List<LogprobEntry> entries);

    /** A token's raw bytes as OpenAI lists them: each an int 0..255. */
    static ArrayNode bytes(byte[] bytes) {
        ArrayNode array = JSON.arrayNode(bytes.length);
        for (byte b : bytes) array.add(b & 0xff);
        return array;
    }

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
        Chat(String model, boolean logprobs) {
            super("chatcmpl-", model, logprobs);
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
        ObjectNode chunk(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) {
            ObjectNode choice = choice();
            ObjectNode message = choice.putObject("delta");
            if (!delta.reasoning().isEmpty()) message.put("reasoning_content", delta.reasoning());
            if (!delta.content().isEmpty()) message.put("content", delta.content());
            choice.set("logprobs", logprobsNode(entries));
            choice.putNull("finish_reason");
            return chunkWith(choice);
        }

        @Override
        ObjectNode end(String finishReason, List<LogprobEntry> entries) {
            ObjectNode choice = choice();
            choice.putObject("delta");
            choice.set("logprobs", entries.isEmpty() ? JSON.nullNode() : logprobsNode(entries));
            choice.put("finish_reason", finishReason);
            return chunkWith(choice);
        }

        /** A message with calls has null content when the model wrote no text besides them, as OpenAI's. */
        @Override
        ObjectNode whole(String reasoning, String content, List<ToolCallSplitter.Call> calls, String finishReason,
                ObjectNode usage, List<LogprobEntry> entries) {
            ObjectNode answer = header("chat.completion");
            ObjectNode choice = choice();
            ObjectNode message = choice.putObject("message");
            message.put("role", "assistant");
            if (calls.isEmpty() || !content.isEmpty()) message.put("content", content);
            else message.putNull("content");
            if (!reasoning.isEmpty()) message.put("reasoning_content", reasoning);
            if (!calls.isEmpty()) {
                ArrayNode toolCalls = message.putArray("tool_calls");
                for (ToolCallSplitter.Call call : calls) {
                    ObjectNode node = toolCalls.addObject();
                    node.put("id", call.id());
                    node.put("type", "function");
                    node.putObject("function").put("name", call.name()).put("arguments", call.arguments());
                }
            }
            choice.set("logprobs", logprobsNode(entries));
            choice.put("finish_reason", finishReason);
            ArrayNode choices = answer.putArray("choices");
            choices.add(choice);
            answer.set("usage", usage);
            return answer;
        }

        /**
         * {@code {"content": [...], "refusal": null}}. Tokens inside {@code <think>} are listed in content too: the
         * list follows the generated tokens, whichever of reasoning_content and content their text went to.
         */
        @Override
        ObjectNode logprobsObject(List<LogprobEntry> entries) {
            ObjectNode logprobs = JSON.objectNode();
            ArrayNode content = logprobs.putArray("content");
            for (LogprobEntry entry : entries) {
                ObjectNode token = candidate(entry.chosen());
                ArrayNode top = token.putArray("top_logprobs");
                for (LogprobEntry.Candidate alternative : entry.top()) top.add(candidate(alternative));
                content.add(token);
            }
            logprobs.putNull("refusal");
            return logprobs;
        }

        private static ObjectNode candidate(LogprobEntry.Candidate candidate) {
            ObjectNode node = JSON.objectNode();
            node.put("token", candidate.text());
            node.put("logprob", candidate.logprob());
            node.set("bytes", bytes(candidate.bytes()));
            return node;
        }
    }

    private static final class Text extends AnswerFormat {
        Text(String model, boolean logprobs) {
            super("cmpl-", model, logprobs);
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
        ObjectNode chunk(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) {
            return chunkWith(textChoice(delta.reasoning() + delta.content(), null, entries));
        }

        @Override
        ObjectNode end(String finishReason, List<LogprobEntry> entries) {
            return chunkWith(textChoice("", finishReason, entries));
        }

        @Override
        ObjectNode whole(String reasoning, String content, List<ToolCallSplitter.Call> calls, String finishReason,
                ObjectNode usage, List<LogprobEntry> entries) {
            ObjectNode answer = header("text_completion");
            answer.putArray("choices").add(textChoice(reasoning + content, finishReason, entries));
            answer.set("usage", usage);
            return answer;
        }

        private ObjectNode textChoice(String text, String finishReason, List<LogprobEntry> entries) {
            ObjectNode choice = choice();
            choice.put("text", text);
            choice.set("logprobs", logprobsNode(entries));
            choice.put("finish_reason", finishReason);
            return choice;
        }

        /**
         * The legacy shape: parallel lists of token texts, their logprobs, a {text: logprob} object of the
         * alternatives per token (with the chosen token, as OpenAI always includes it; of two alternatives with the
         * same text the likelier is kept) and each token's text offset in the completion.
         */
        @Override
        ObjectNode logprobsObject(List<LogprobEntry> entries) {
            ObjectNode logprobs = JSON.objectNode();
            ArrayNode tokens = logprobs.putArray("tokens");
            ArrayNode tokenLogprobs = logprobs.putArray("token_logprobs");
            ArrayNode top = logprobs.putArray("top_logprobs");
            ArrayNode offsets = logprobs.putArray("text_offset");
            for (LogprobEntry entry : entries) {
                tokens.add(entry.chosen().text());
                tokenLogprobs.add(entry.chosen().logprob());
                ObjectNode alternatives = top.addObject();
                for (LogprobEntry.Candidate alternative : entry.top()) {
                    if (!alternatives.has(alternative.text())) {
                        alternatives.put(alternative.text(), alternative.logprob());
                    }
                }
                if (!alternatives.has(entry.chosen().text())) {
                    alternatives.put(entry.chosen().text(), entry.chosen().logprob());
                }
                offsets.add(entry.textOffset());
            }
            return logprobs;
        }
    }
}
