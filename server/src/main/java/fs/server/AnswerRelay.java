package fs.server;

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
import java.util.function.Function;

/**
 * One request's answer on its way from the engine to the writer of whichever API asked (OpenAI's, or another that
 * fs serve speaks): the one generation path they share. {@link #submit} checks the {@link CompletionRequest} against
 * the served model (its name, whether the prompt fits), turns it into token ids, chooses its constraint and submits
 * it; {@link #relay} takes the answer's tokens through the stop strings and the reasoning and tool-call splitters to
 * the API's {@link Sink}. A client that goes away cancels its request at the latest one token after (or, while it
 * waits for a slot, within {@link #CLIENT_CHECK}). Used by the request's own (virtual) thread only.
 */
final class AnswerRelay {
    /** How often a request that waits for its first token looks whether its client is still there. */
    static final Duration CLIENT_CHECK = Duration.ofMillis(100);

    /** How an answer ended; each API names it in its own words. */
    enum End {
        /** The model ended its turn. */
        END_OF_TURN,
        /** One of the request's stop strings came (it is not part of the answer). */
        STOP_STRING,
        /** The token limit (or the end of the context). */
        LENGTH,
        /** The model called tools (the answer ends after its calls). */
        TOOL_CALLS;

        /** OpenAI's finish_reason. */
        String openAi() {
            return switch (this) {
                case END_OF_TURN, STOP_STRING -> "stop";
                case LENGTH -> "length";
                case TOOL_CALLS -> "tool_calls";
            };
        }
    }

    /**
     * Where the relayed answer goes: each piece of text, and the calls of a chat that offered tools as they come (the
     * call at {@code index}, 0, 1, … in the answer, opens, its arguments grow, it closes), with the logprobs entries
     * of the tokens each piece brings.
     */
    interface Sink {
        void text(ReasoningSplitter.Delta delta, List<LogprobEntry> entries) throws IOException;

        void callPiece(int index, ToolCallSplitter.Piece piece, List<LogprobEntry> entries) throws IOException;
    }

    /**
     * The answer's end: {@code end} null when it was cut (the server shuts down) or failed ({@code error} set);
     * {@code tokens} the tokens counted; {@code unsent} the logprobs entries no piece carried (their text was held
     * back or empty); {@code stopString} the stop string that ended it ({@link End#STOP_STRING}), else null.
     */
    record Finish(End end, RuntimeException error, GenerationStats stats, int tokens, List<LogprobEntry> unsent,
                  String stopString) {
        /** Whether the answer came to an end (else {@link #failure} says why not). */
        boolean ended() {
            return end != null;
        }

        /** The error for an answer that did not end. */
        ApiException failure() {
            if (error == null || error instanceof CompletionEngine.UnavailableException) {
                return ApiException.unavailable("shutting_down",
                        "the server is shutting down: the answer was cut short");
            }
            String message = error instanceof FsException ? error.getMessage()
                    : "internal error: " + error.getClass().getSimpleName()
                            + (error.getMessage() != null ? ": " + error.getMessage() : "");
            return new ApiException(500, "server_error", "generation_failed", null, message);
        }
    }

    private final CompletionRequest request;
    private final int promptTokens;
    private final AnswerQueue answer;
    private final CompletionEngine.Handle handle;

    private AnswerRelay(CompletionRequest request, int promptTokens, AnswerQueue answer,
                        CompletionEngine.Handle handle) {
        this.request = request;
        this.promptTokens = promptTokens;
        this.answer = answer;
        this.handle = handle;
    }

    /**
     * Submits {@code request} to {@code served}'s engine: a 400 when it names another model, its prompt is empty or
     * does not fit ({@code promptParam} names the field at fault), or its sampling or constraint cannot be used; a
     * 503 when the engine cannot take it now.
     */
    static AnswerRelay submit(ServedModel served, CompletionRequest request, String promptParam,
                              AnswerConstraints constraints, ServerMetrics metrics) {
        served.requireNamed(request.model());
        int[] prompt = promptIds(served, request.prompt(), request.tools(), promptParam);
        checkFits(prompt.length, request.maxTokens(), served.engine().contextLength(), promptParam);
        SamplingParams params = request.sampling().over(defaults(served));
        // A chat whose thinking is not turned off leaves Qwen3 to open a think block before a constrained shape.
        boolean thinking = request.prompt() instanceof CompletionRequest.Prompt.Chat c
                && !Boolean.FALSE.equals(c.enableThinking());
        TokenConstraint constraint = constraints.of(request, thinking, served.tokenizer(), served.engine().stopIds());
        AnswerQueue answer = new AnswerQueue(served.tokenizer(), metrics);
        try {
            return new AnswerRelay(request, prompt.length, answer, served.engine().submit(prompt, params,
                    request.maxTokens(), request.topLogprobs(), constraint, answer));
        } catch (CompletionEngine.UnavailableException e) {
            metrics.requestRejected();
            throw ApiException.unavailable("unavailable", e.getMessage());
        }
    }

    /** The prompt's length in tokens. */
    int promptTokens() {
        return promptTokens;
    }

    /** An API's way of writing the answer: it relays it (through {@link #relay}) and returns how it finished. */
    @FunctionalInterface
    interface Writer {
        Finish write() throws IOException, InterruptedException;
    }

    /**
     * Writes the answer with {@code writer} and says, for the server's log line, how the request ended, the finish
     * named by {@code reason}. When writing fails (the client went away, or the answer could not be written) the
     * generation is cancelled, so that its slot is free; an interrupt means the server is shutting down.
     */
    CompletionHandler.Outcome write(Writer writer, Function<End, String> reason) throws IOException {
        try {
            Finish finish = writer.write();
            return new CompletionHandler.Outcome(promptTokens, finish.tokens(),
                    finish.ended() ? reason.apply(finish.end()) : null);
        } catch (IOException | RuntimeException e) {
            handle.cancel();
            throw e;
        } catch (InterruptedException e) {
            handle.cancel();
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("shutting_down", "the server is shutting down");
        }
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
    Finish relay(Exchange exchange, Sink out) throws IOException, InterruptedException {
        boolean chat = request.prompt() instanceof CompletionRequest.Prompt.Chat;
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
                    End end = switch (done.reason()) {
                        case END_OF_SEQUENCE -> pieces.calls() > 0 ? End.TOOL_CALLS : End.END_OF_TURN;
                        case TOKEN_LIMIT, CONTEXT_FULL -> pieces.cut() ? pieces.cutEnd() : End.LENGTH;
                        // Not by this request: the engine is shutting down.
                        case CANCELLED -> pieces.cut() ? pieces.cutEnd() : null;
                    };
                    return new Finish(end, null, done.stats(), tokens, List.copyOf(pieces.unsent),
                            end == End.STOP_STRING ? pieces.stopString() : null);
                }
                case AnswerQueue.Event.Failed failed -> {
                    return new Finish(null, failed.error(), null, tokens, List.of(), null);
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
        private final Sink out;
        private int calls;

        Pieces(StopMatcher stops, ReasoningSplitter reasoning, ToolCallSplitter toolCalls, boolean oneCall,
               Sink out) {
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

        /** How an answer ended here ended. */
        End cutEnd() {
            return calls > 0 ? End.TOOL_CALLS : End.STOP_STRING;
        }

        int calls() {
            return calls;
        }

        /** The stop string found, or null. */
        String stopString() {
            return stops.matched();
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

    /**
     * The prompt's token ids as the model reads them (a chat through its template, with the tools it is shown);
     * {@code promptParam} names the request's field that holds the prompt, for the template's refusals.
     */
    static int[] promptIds(ServedModel served, CompletionRequest.Prompt prompt, ChatTools tools, String promptParam) {
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
            throw ApiException.invalid(promptParam, e.getMessage());
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
