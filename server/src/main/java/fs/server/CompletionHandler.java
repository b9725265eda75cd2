package fs.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.generate.ReasoningSplitter;
import fs.generate.ToolCallSplitter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Answers {@code POST /v1/chat/completions} and {@code POST /v1/completions}: reads OpenAI's request, submits it
 * through the {@link AnswerRelay} and writes the answer in OpenAI's shapes, streamed (server-sent events ending in
 * {@code [DONE]}) or whole, on the request's own (virtual) thread.
 */
final class CompletionHandler {
    /** How a handled request ended, for the server's log line. */
    record Outcome(int promptTokens, int completionTokens, String finishReason) {}

    private final ServerMetrics metrics;
    private final AnswerConstraints constraints;

    CompletionHandler(ServerMetrics metrics, AnswerConstraints constraints) {
        this.metrics = metrics;
        this.constraints = constraints;
    }

    Outcome handle(Exchange exchange, ServedModel served, boolean chat) throws IOException {
        CompletionRequest request = chat
                ? CompletionRequest.chat(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES))
                : CompletionRequest.completion(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES));
        AnswerRelay relay = AnswerRelay.submit(served, request, chat ? "messages" : "prompt", constraints, metrics);
        boolean logprobs = request.topLogprobs() >= 0;
        AnswerFormat format =
                chat ? AnswerFormat.chat(served.id(), logprobs) : AnswerFormat.text(served.id(), logprobs);
        return relay.write(() -> request.stream()
                ? stream(exchange, request, format, relay)
                : whole(exchange, format, relay), AnswerRelay.End::openAi);
    }

    private static AnswerRelay.Finish stream(Exchange exchange, CompletionRequest request, AnswerFormat format,
            AnswerRelay relay) throws IOException, InterruptedException {
        EventStream events = exchange.openEventStream();
        ObjectNode start = format.start();
        if (start != null) events.send(start);
        AnswerRelay.Finish finish = relay.relay(exchange, new AnswerRelay.Sink() {
            @Override
            public void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) throws IOException {
                events.send(format.chunk(delta, entries));
            }

            @Override
            public void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries)
                    throws IOException {
                ObjectNode chunk = format.toolCallChunk(index, piece, entries);
                if (chunk != null) events.send(chunk);
            }
        });
        if (!finish.ended()) {
            // Headers are gone: the error travels as an event, as OpenAI streams errors; no [DONE], it did not finish.
            events.send(finish.failure().body());
            exchange.complete();
            return finish;
        }
        events.send(format.end(finish.end().openAi(), finish.unsent()));
        if (request.includeUsage()) events.send(format.usageChunk(usage(relay.promptTokens(), finish)));
        events.done();
        return finish;
    }

    private static AnswerRelay.Finish whole(Exchange exchange, AnswerFormat format, AnswerRelay relay)
            throws IOException, InterruptedException {
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        List<ToolCallSplitter.Call> calls = new ArrayList<>();
        List<LogprobEntry> logprobs = new ArrayList<>();
        AnswerRelay.Finish finish = relay.relay(exchange, new AnswerRelay.Sink() {
            @Override
            public void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) {
                reasoning.append(delta.reasoning());
                content.append(delta.content());
                logprobs.addAll(entries);
            }

            @Override
            public void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries) {
                if (piece instanceof ToolCallSplitter.Piece.Closed closed) calls.add(closed.call());
                logprobs.addAll(entries);
            }
        });
        if (!finish.ended()) throw finish.failure();
        logprobs.addAll(finish.unsent());
        exchange.sendJson(200, format.whole(reasoning.toString(), content.toString(), calls, finish.end().openAi(),
                usage(relay.promptTokens(), finish), logprobs));
        return finish;
    }

    private static ObjectNode usage(int promptTokens, AnswerRelay.Finish finish) {
        return AnswerFormat.usage(promptTokens, finish.stats().cachedTokens(), finish.tokens());
    }
}
