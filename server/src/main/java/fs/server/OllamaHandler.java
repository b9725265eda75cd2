package fs.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.generate.GenerationStats;
import fs.generate.ReasoningSplitter;
import fs.generate.ToolCallSplitter;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Answers Ollama's {@code POST /api/chat} and {@code POST /api/generate}: reads the request ({@link OllamaRequest}),
 * submits it through the {@link AnswerRelay} and writes the answer in Ollama's shapes, streamed (newline-delimited
 * JSON, Ollama's default) or whole, the last object with {@code done: true}, the {@code done_reason} and the counts
 * and durations (nanoseconds) of the generation.
 */
final class OllamaHandler {
    private final ServerMetrics metrics;
    private final AnswerConstraints constraints;

    OllamaHandler(ServerMetrics metrics, AnswerConstraints constraints) {
        this.metrics = metrics;
        this.constraints = constraints;
    }

    CompletionHandler.Outcome handle(Exchange exchange, ServedModel served, boolean chat) throws IOException {
        long start = System.nanoTime();
        JsonNode body = exchange.readJsonObject(ApiServer.MAX_BODY_BYTES);
        int context = served.engine().contextLength();
        OllamaRequest request = chat ? OllamaRequest.chat(body, context) : OllamaRequest.generate(body, context);
        OllamaModels.requireServed(served, request.model());
        Shape shape = new Shape(request.model(), chat);
        if (request.loadOnly()) { // the model is loaded: say so, as Ollama answers a request to load it
            exchange.sendJson(200, shape.last("load", null, null));
            return null;
        }
        AnswerRelay relay = AnswerRelay.submit(served, request.completion(), chat ? "messages" : "prompt",
                constraints, metrics);
        return relay.write(() -> request.completion().stream()
                ? stream(exchange, shape, relay, start)
                : whole(exchange, shape, relay, start), OllamaHandler::doneReason);
    }

    private static AnswerRelay.Finish stream(Exchange exchange, Shape shape, AnswerRelay relay, long start)
            throws IOException, InterruptedException {
        NdjsonStream lines = exchange.openNdjsonStream();
        AnswerRelay.Finish finish = relay.relay(exchange, new AnswerRelay.Sink() {
            @Override
            public void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) throws IOException {
                lines.send(shape.piece(delta.reasoning(), delta.content(), List.of()));
            }

            @Override
            public void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries)
                    throws IOException {
                // Ollama sends each call whole, in a message of its own.
                if (piece instanceof ToolCallSplitter.Piece.Closed closed) {
                    lines.send(shape.piece("", "", List.of(closed.call())));
                }
            }
        });
        if (!finish.ended()) {
            // Headers are gone: the error travels as a line, as Ollama streams errors.
            lines.end(OllamaModels.ERRORS.body(finish.failure()));
            return finish;
        }
        lines.end(shape.last(doneReason(finish.end()), null, timings(relay, finish, start)));
        return finish;
    }

    private static AnswerRelay.Finish whole(Exchange exchange, Shape shape, AnswerRelay relay, long start)
            throws IOException, InterruptedException {
        StringBuilder thinking = new StringBuilder();
        StringBuilder content = new StringBuilder();
        List<ToolCallSplitter.Call> calls = new ArrayList<>();
        AnswerRelay.Finish finish = relay.relay(exchange, new AnswerRelay.Sink() {
            @Override
            public void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) {
                thinking.append(delta.reasoning());
                content.append(delta.content());
            }

            @Override
            public void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries) {
                if (piece instanceof ToolCallSplitter.Piece.Closed closed) calls.add(closed.call());
            }
        });
        if (!finish.ended()) throw finish.failure();
        ObjectNode answer = shape.piece(thinking.toString(), content.toString(), calls);
        exchange.sendJson(200, shape.last(doneReason(finish.end()), answer, timings(relay, finish, start)));
        return finish;
    }

    /** Ollama's done_reason: "stop" for an answer that ended (calls included), "length" for one cut at the limit. */
    private static String doneReason(AnswerRelay.End end) {
        return end == AnswerRelay.End.LENGTH ? "length" : "stop";
    }

    /** The counts and durations (nanoseconds) Ollama's last object carries; the model was loaded already. */
    private static ObjectNode timings(AnswerRelay relay, AnswerRelay.Finish finish, long start) {
        GenerationStats stats = finish.stats();
        ObjectNode timings = JsonNodeFactory.instance.objectNode();
        timings.put("total_duration", System.nanoTime() - start);
        timings.put("load_duration", 0);
        timings.put("prompt_eval_count", relay.promptTokens());
        timings.put("prompt_eval_duration", stats.promptNanos());
        timings.put("eval_count", finish.tokens());
        timings.put("eval_duration", stats.decodeNanos());
        return timings;
    }

    /**
     * The objects of one answer, of /api/chat (the text in {@code message}) or /api/generate (in {@code response}),
     * each with the model as the request named it and the time it was made.
     */
    private record Shape(String model, boolean chat) {
        /** A piece of the answer (or all of it): thinking and text, and for a chat the calls. */
        ObjectNode piece(String thinking, String content, List<ToolCallSplitter.Call> calls) {
            ObjectNode piece = head();
            ObjectNode text = chat ? piece.putObject("message").put("role", "assistant") : piece;
            text.put(chat ? "content" : "response", content);
            if (!thinking.isEmpty()) text.put("thinking", thinking);
            if (!calls.isEmpty()) {
                ArrayNode toolCalls = text.putArray("tool_calls");
                for (ToolCallSplitter.Call call : calls) {
                    toolCalls.addObject().putObject("function").put("name", call.name())
                            .set("arguments", arguments(call));
                }
            }
            piece.put("done", false);
            return piece;
        }

        /**
         * The last object: {@code answer} (a piece with the whole answer, when not streamed; else an empty one), done,
         * why, and the {@code timings} (none for a load).
         */
        ObjectNode last(String doneReason, ObjectNode answer, ObjectNode timings) {
            ObjectNode last = answer != null ? answer : piece("", "", List.of());
            last.put("done", true);
            last.put("done_reason", doneReason);
            if (timings != null) last.setAll(timings);
            return last;
        }

        private ObjectNode head() {
            ObjectNode head = JsonNodeFactory.instance.objectNode();
            head.put("model", model);
            head.put("created_at", Instant.now().toString());
            return head;
        }

        /**
         * A call's arguments as the object Ollama sends; a call cut short by the token limit, whose arguments are not
         * whole JSON, has none (its done_reason says "length").
         */
        private static JsonNode arguments(ToolCallSplitter.Call call) {
            try {
                JsonNode arguments = Exchange.WHOLE_JSON.readTree(call.arguments());
                if (arguments != null && arguments.isObject()) return arguments;
            } catch (JsonProcessingException e) {
                // cut short: no arguments, below
            }
            return JsonNodeFactory.instance.objectNode();
        }
    }
}
