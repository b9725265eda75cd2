package fs.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.chat.ChatPrompt;
import fs.generate.GenerationStats;
import fs.generate.ReasoningSplitter;
import fs.generate.SamplingParams;
import fs.generate.TokenConstraint;
import fs.generate.ToolCallSplitter;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Answers {@code POST /v1/chat/completions} and {@code POST /v1/completions}: checks the request, turns it into
 * token ids, submits it to the engine and relays the answer, streamed or whole, on the request's own (virtual)
 * thread. It knows the engine only by {@link CompletionEngine}. A client that goes away cancels its request, streamed
 * or whole, at the latest one token after (or, while it waits for a slot, within {@link #CLIENT_CHECK}).
 */
final class CompletionHandler {
    /** How often a request that waits for its first token looks whether its client is still there. */
    static final Duration CLIENT_CHECK = Duration.ofMillis(100);

    /** How a handled request ended, for the server's log line. */
    record Outcome(int promptTokens, int completionTokens, String finishReason) {}

    /**
     * The answer's end: finishReason null when it was cut (the server shuts down) or failed (error set);
     * {@code unsent} the logprobs entries no delta carried (their text was held back or empty).
     */
    private record Finish(String finishReason, RuntimeException error, GenerationStats stats, int tokens,
                          List<LogprobEntry> unsent) {}

    /**
     * Where the relayed answer goes: each piece of text, and the calls of a chat that offered tools as they come (the
     * call at {@code index}, 0, 1, … in the answer, opens, its arguments grow, it closes), with the logprobs entries
     * of the tokens each piece brings.
     */
    private interface DeltaSink {
        void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) throws IOException;

        void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries) throws IOException;
    }

    private final ServerMetrics metrics;
    private final AnswerConstraints constraints = new AnswerConstraints();

    CompletionHandler(ServerMetrics metrics) {
        this.metrics = metrics;
    }

    Outcome handle(Exchange exchange, ServedModel served, boolean chat) throws IOException {
        CompletionRequest request = chat
                ? CompletionRequest.chat(exchange.readJsonObject(OpenAiServer.MAX_BODY_BYTES))
                : CompletionRequest.completion(exchange.readJsonObject(OpenAiServer.MAX_BODY_BYTES));
        served.requireNamed(request.model());
        int[] prompt = promptIds(served, request.prompt(), request.tools());
        checkFits(prompt.length, request.maxTokens(), served.engine().contextLength(), chat ? "messages" : "prompt");
        SamplingParams params = request.sampling().over(defaults(served));
        // A chat whose thinking is not turned off leaves Qwen3 to open a think block before a constrained shape.
        boolean thinking = request.prompt() instanceof CompletionRequest.Prompt.Chat c
                && !Boolean.FALSE.equals(c.enableThinking());
        TokenConstraint constraint =
                constraints.of(request, thinking, served.tokenizer(), served.engine().stopIds());

        AnswerQueue answer = new AnswerQueue(served.tokenizer(), metrics);
        CompletionEngine.Handle handle;
        try {
            handle = served.engine().submit(prompt, params, request.maxTokens(), request.topLogprobs(),
                    constraint, answer);
        } catch (CompletionEngine.UnavailableException e) {
            metrics.requestRejected();
            throw ApiException.unavailable("unavailable", e.getMessage());
        }
        boolean logprobs = request.topLogprobs() >= 0;
        AnswerFormat format =
                chat ? AnswerFormat.chat(served.id(), logprobs) : AnswerFormat.text(served.id(), logprobs);
        try {
            Finish finish = request.stream()
                    ? stream(exchange, request, format, answer, handle, prompt.length, chat)
                    : whole(exchange, request, format, answer, handle, prompt.length, chat);
            return new Outcome(prompt.length, finish.tokens, finish.finishReason);
        } catch (IOException | RuntimeException e) {
            handle.cancel(); // the client went away (or the answer could not be written): free the engine
            throw e;
        } catch (InterruptedException e) {
            handle.cancel();
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("shutting_down", "the server is shutting down");
        }
    }

    private Finish stream(Exchange exchange, CompletionRequest request, AnswerFormat format, AnswerQueue answer,
            CompletionEngine.Handle handle, int promptTokens, boolean chat) throws IOException, InterruptedException {
        EventStream events = exchange.openEventStream();
        ObjectNode start = format.start();
        if (start != null) events.send(start);
        Finish finish = relay(exchange, request, answer, handle, chat, new DeltaSink() {
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
        if (finish.finishReason == null) {
            // Headers are gone: the error travels as an event, as OpenAI streams errors; no [DONE], it did not finish.
            events.send(failure(finish).body());
            exchange.complete();
            return finish;
        }
        events.send(format.end(finish.finishReason, finish.unsent));
        if (request.includeUsage()) events.send(format.usageChunk(usage(promptTokens, finish)));
        events.done();
        return finish;
    }

    private Finish whole(Exchange exchange, CompletionRequest request, AnswerFormat format, AnswerQueue answer,
            CompletionEngine.Handle handle, int promptTokens, boolean chat) throws IOException, InterruptedException {
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        List<ToolCallSplitter.Call> calls = new ArrayList<>();
        List<LogprobEntry> logprobs = new ArrayList<>();
        Finish finish = relay(exchange, request, answer, handle, chat, new DeltaSink() {
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
        if (finish.finishReason == null) throw failure(finish);
        logprobs.addAll(finish.unsent);
        exchange.sendJson(200, format.whole(reasoning.toString(), content.toString(), calls, finish.finishReason,
                usage(promptTokens, finish), logprobs));
        return finish;
    }

    /**
     * Takes the answer's events until its end, passing the text through the stop strings, (for a chat) the reasoning
     * splitter and (for a chat that offers tools) the call splitter to {@code out}. A stop string cancels the
     * generation; what the engine made after it is dropped and not counted; so does the first call when the request
     * allows only one. Each token's logprobs entry goes with the first piece of text or call sent after it arrived
     * (the stop strings may hold its text back, the splitters may hold back or split it), so that the entries a client
     * sees match the tokens counted: the token in which a stop string ends is counted and reported, none after it.
     * Before each token is relayed (and every {@link #CLIENT_CHECK} while none comes) it looks whether the client is
     * still there; when it is not, the generation is cancelled, so its slot is free before the next decode step.
     */
    private static Finish relay(Exchange exchange, CompletionRequest request, AnswerQueue answer,
            CompletionEngine.Handle handle, boolean chat, DeltaSink out) throws IOException, InterruptedException {
        Pieces pieces = new Pieces(new StopMatcher(request.stop()), chat ? new ReasoningSplitter() : null,
                request.tools().offered() ? new ToolCallSplitter() : null, !request.tools().parallel(), out);
        int tokens = 0;
        while (true) {
            AnswerQueue.Event event = answer.poll(CLIENT_CHECK);
            if (!(event instanceof AnswerQueue.Event.Done) && exchange.clientGone()) {
                handle.cancel();
                throw new Exchange.ClientGoneException("the client went away after " + tokens + " tokens", null);
            }
            if (event == null) continue;
            switch (event) {
                case AnswerQueue.Event.Token token -> {
                    if (pieces.cut()) continue;
                    tokens++;
                    if (token.logprobs() != null) pieces.unsent.add(token.logprobs());
                    pieces.push(token.text());
                    if (pieces.cut()) handle.cancel();
                }
                case AnswerQueue.Event.Done done -> {
                    pieces.end(done.text());
                    String reason = switch (done.reason()) {
                        case END_OF_SEQUENCE -> pieces.calls() > 0 ? "tool_calls" : "stop";
                        case TOKEN_LIMIT, CONTEXT_FULL -> pieces.cut() ? pieces.cutReason() : "length";
                        // Not by this request: the engine is shutting down.
                        case CANCELLED -> pieces.cut() ? pieces.cutReason() : null;
                    };
                    return new Finish(reason, null, done.stats(), tokens, List.copyOf(pieces.unsent));
                }
                case AnswerQueue.Event.Failed failed -> {
                    return new Finish(null, failed.error(), null, tokens, List.of());
                }
            }
        }
    }

    /** One answer's text on its way to the client: through the stop strings, then the splitters. */
    private static final class Pieces {
        final List<LogprobEntry> unsent = new ArrayList<>();
        private final StopMatcher stops;
        private final ReasoningSplitter reasoning; // null for a text completion
        private final ToolCallSplitter toolCalls; // null when no tools are offered
        private final boolean oneCall;
        private final DeltaSink out;
        private int calls;

        Pieces(StopMatcher stops, ReasoningSplitter reasoning, ToolCallSplitter toolCalls, boolean oneCall,
               DeltaSink out) {
            this.stops = stops;
            this.reasoning = reasoning;
            this.toolCalls = toolCalls;
            this.oneCall = oneCall;
            this.out = out;
        }

        /** Whether the answer was ended here: a stop string, or the one call allowed. */
        boolean cut() {
            return stops.stopped() || oneCallMade();
        }

        /** Whether the request allows one call and it was made: what comes after it is dropped. */
        private boolean oneCallMade() {
            return oneCall && calls > 0;
        }

        /** The finish reason of an answer ended here. */
        String cutReason() {
            return calls > 0 ? "tool_calls" : "stop";
        }

        int calls() {
            return calls;
        }

        void push(String text) throws IOException {
            emit(stops.push(text));
        }

        /** The end of the answer: {@code text} is the decoder's last bytes; what was held back goes out. */
        void end(String text) throws IOException {
            if (!cut()) emit(stops.push(text) + stops.flush());
            if (reasoning != null) split(reasoning.flush());
            if (toolCalls != null && !oneCallMade()) pieces(toolCalls.flush());
        }

        private void emit(String text) throws IOException {
            if (text.isEmpty()) return;
            split(reasoning != null ? reasoning.push(text) : new ReasoningSplitter.Delta("", text));
        }

        /** Sends a delta as it is, or with tools offered its reasoning and then its content's text and calls. */
        private void split(ReasoningSplitter.Delta delta) throws IOException {
            if (delta.isEmpty() || oneCallMade()) return;
            if (toolCalls == null) {
                send(delta);
                return;
            }
            if (!delta.reasoning().isEmpty()) send(new ReasoningSplitter.Delta(delta.reasoning(), ""));
            if (!delta.content().isEmpty()) pieces(toolCalls.push(delta.content()));
        }

        private void pieces(List<ToolCallSplitter.Piece> pieces) throws IOException {
            for (ToolCallSplitter.Piece piece : pieces) {
                if (oneCallMade()) return; // the one call allowed was made: the rest is dropped
                switch (piece) {
                    case ToolCallSplitter.Piece.Text text -> send(new ReasoningSplitter.Delta("", text.text()));
                    case ToolCallSplitter.Piece.Opened _, ToolCallSplitter.Piece.Arguments _ ->
                            out.callPiece(calls, piece, taken());
                    case ToolCallSplitter.Piece.Closed _ -> out.callPiece(calls++, piece, taken());
                }
            }
        }

        /** Sends a delta with the entries waiting for one, which are then sent. */
        private void send(ReasoningSplitter.Delta delta) throws IOException {
            out.text(delta, taken());
        }

        private List<LogprobEntry> taken() {
            List<LogprobEntry> entries = List.copyOf(unsent);
            unsent.clear();
            return entries;
        }
    }

    private static ObjectNode usage(int promptTokens, Finish finish) {
        return AnswerFormat.usage(promptTokens, finish.stats.cachedTokens(), finish.tokens);
    }

    /** The error for an answer that did not finish. */
    private static ApiException failure(Finish finish) {
        if (finish.error == null || finish.error instanceof CompletionEngine.UnavailableException) {
            return ApiException.unavailable("shutting_down", "the server is shutting down: the answer was cut short");
        }
        String message = finish.error instanceof FsException ? finish.error.getMessage()
                : "internal error: " + finish.error.getClass().getSimpleName()
                        + (finish.error.getMessage() != null ? ": " + finish.error.getMessage() : "");
        return new ApiException(500, "server_error", "generation_failed", null, message);
    }

    private static int[] promptIds(ServedModel served, CompletionRequest.Prompt prompt, ChatTools tools) {
        try {
            return switch (prompt) {
                // Stateless: a system prompt, if any, is the request's first message.
                case CompletionRequest.Prompt.Chat chat -> new ChatPrompt(served.chatTemplate().get(),
                        served.tokenizer()).nextTurn(null, chat.messages(), tools.templateTools(),
                        chat.enableThinking());
                case CompletionRequest.Prompt.Text text -> served.tokenizer().encode(text.text());
                case CompletionRequest.Prompt.Tokens tokens -> {
                    int vocab = served.tokenizer().vocabSize();
                    for (int id : tokens.ids()) {
                        if (id < 0 || id >= vocab) {
                            throw ApiException.invalid("prompt", "token id " + id + " is outside the vocabulary (0.."
                                    + (vocab - 1) + ")");
                        }
                    }
                    yield tokens.ids();
                }
            };
        } catch (FsException e) {
            // The template's refusals (e.g. a system message that is not first) are about the request.
            throw ApiException.invalid(prompt instanceof CompletionRequest.Prompt.Chat ? "messages" : "prompt",
                    e.getMessage());
        }
    }

    /** A prompt plus max_tokens must fit the context, as OpenAI refuses one that does not. */
    private static void checkFits(int promptTokens, int maxTokens, int context, String param) {
        if (promptTokens < 1) throw ApiException.invalid(param, "the prompt is empty: there is nothing to continue");
        long needed = promptTokens + (long) Math.max(maxTokens, 0);
        if (needed > context) {
            String wanted = maxTokens >= 0 ? promptTokens + " prompt tokens + " + maxTokens + " max_tokens"
                    : promptTokens + " prompt tokens";
            throw new ApiException(400, "invalid_request_error", "context_length_exceeded", param,
                    wanted + " do not fit this server's context of " + context + " tokens (fs serve --ctx)");
        }
    }

    private static SamplingParams defaults(ServedModel served) {
        try {
            return served.defaults().get();
        } catch (FsException e) {
            throw new ApiException(500, "server_error", "bad_generation_config", null, e.getMessage());
        }
    }
}
