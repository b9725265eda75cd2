package fs.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.generate.ReasoningSplitter;
import fs.generate.ToolCallSplitter;
import java.io.IOException;
import java.util.List;

/**
 * Answers {@code POST /v1/responses} (OpenAI's Responses API): reads its request, submits it through the
 * {@link AnswerRelay} and writes the answer as a response object, whole or streamed as the API's typed events, on the
 * request's own (virtual) thread. Stateless: no response is kept.
 */
final class ResponsesHandler {
    private final ServerMetrics metrics;
    private final AnswerConstraints constraints;

    ResponsesHandler(ServerMetrics metrics, AnswerConstraints constraints) {
        this.metrics = metrics;
        this.constraints = constraints;
    }

    CompletionHandler.Outcome handle(Exchange exchange, ServedModel served) throws IOException {
        ResponsesRequest request = ResponsesRequest.read(exchange.readJsonObject(ApiServer.MAX_BODY_BYTES));
        AnswerRelay relay = AnswerRelay.submit(served, request.completion(), "input", constraints, metrics);
        return relay.write(() -> write(exchange, served, request, relay), AnswerRelay.End::openAi);
    }

    private static AnswerRelay.Finish write(Exchange exchange, ServedModel served, ResponsesRequest request,
            AnswerRelay relay) throws IOException, InterruptedException {
        EventStream stream = request.completion().stream() ? exchange.openEventStream() : null;
        ResponsesAnswer answer = new ResponsesAnswer(served.id(), request.echo(),
                stream != null ? stream::send : ResponsesAnswer.Events.NONE);
        answer.start();
        AnswerRelay.Finish finish = relay.relay(exchange, new AnswerRelay.Sink() {
            @Override
            public void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) throws IOException {
                answer.text(delta);
            }

            @Override
            public void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries)
                    throws IOException {
                answer.callPiece(piece);
            }
        });
        // The reasoning's tokens, counted again from its text (the think tags aside).
        int reasoningTokens = answer.reasoning().isEmpty() ? 0
                : served.tokenizer().encode(answer.reasoning()).length;
        int cachedTokens = finish.stats() != null ? finish.stats().cachedTokens() : 0;
        ObjectNode usage = ResponsesAnswer.usage(relay.promptTokens(), cachedTokens, finish.tokens(),
                reasoningTokens);
        if (!finish.ended()) {
            if (stream == null) throw finish.failure();
            // Headers are gone: the failure travels as events, as the Responses API streams it.
            answer.fail(finish.failure(), usage);
            exchange.complete();
        } else {
            ObjectNode response = answer.finish(finish.end(), usage);
            if (stream == null) exchange.sendJson(200, response);
            else exchange.complete();
        }
        return finish;
    }
}
