package fs.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import fs.FsException;
import fs.chat.ChatMessage;
import fs.chat.ChatPrompt;
import fs.chat.constraint.AnswerGrammar;
import fs.generate.ReasoningSplitter;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.generate.TokenConstraint;
import fs.generate.ToolCallSplitter;
import fs.tokenizer.StreamingDecoder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One conversation with an {@link FsModel}: it keeps its history (the system prompt, the user's messages and the
 * answers) and renders all of it through the model's chat template at each {@link #send}; the scheduler reuses the
 * KV cache for the part of that prompt its slot already holds, so a turn runs only what is new.
 *
 * <p>A chat answers one message at a time: a {@code send} while another is running on the same chat fails. Different
 * chats of one model may send from different threads at once; they are decoded together. {@link #close} (any thread)
 * stops an answer that is running and ends the chat.
 */
public final class Chat implements AutoCloseable {
    private final FsModel model;
    private final ChatParams params;
    private final SamplingParams sampling;
    private final ChatPrompt chatPrompt;
    private final Cancellation closing = new Cancellation();
    private final AtomicBoolean sending = new AtomicBoolean();
    // Touched only by the thread that holds `sending`.
    private final List<Turn> history = new ArrayList<>();

    /** A message of the history, as the caller sees it and as the chat template renders it (with its reasoning). */
    private record Turn(Message message, ChatMessage rendered) {
        static Turn of(Message message) {
            return new Turn(message, switch (message.role()) {
                case USER -> ChatMessage.user(message.text());
                case ASSISTANT -> new ChatMessage("assistant", message.text(), null, calls(message.toolCalls()));
                case TOOL -> ChatMessage.tool(message.text());
            });
        }
    }

    Chat(FsModel model, ChatParams params, SamplingParams sampling, List<Message> earlier) {
        this.model = model;
        this.params = params;
        this.sampling = sampling;
        this.chatPrompt = new ChatPrompt(model.template(), model.tokenizer());
        for (Message m : earlier) history.add(Turn.of(Objects.requireNonNull(m, "a message of the history is null")));
    }

    /** The calls as the chat template writes them: arguments that are JSON as JSON, any other text as it is. */
    private static List<fs.chat.ToolCall> calls(List<ToolCall> calls) {
        List<fs.chat.ToolCall> rendered = new ArrayList<>();
        for (ToolCall call : calls) {
            JsonNode arguments;
            try {
                arguments = Tool.JSON.readTree(call.arguments());
            } catch (JsonProcessingException e) {
                arguments = TextNode.valueOf(call.arguments());
            }
            rendered.add(new fs.chat.ToolCall(call.name(), arguments));
        }
        return rendered;
    }

    /** {@link #send(String, TokenConsumer, Cancellation)} with no way to cancel but {@link #close}. */
    public Reply send(String message, TokenConsumer onText) {
        return send(message, onText, new Cancellation());
    }

    /** {@link #send(List, TokenConsumer, Cancellation)} of one user message. */
    public Reply send(String message, TokenConsumer onText, Cancellation cancellation) {
        Objects.requireNonNull(message, "message");
        return send(List.of(Message.user(message)), onText, cancellation);
    }

    /**
     * Answers {@code messages} (a user's message, or the results of the tools the last answer called): adds them to
     * the history, generates the answer and streams its text (and, apart, the model's reasoning) to {@code onText} on
     * this thread as it comes, then adds the answer, with the tool calls it made, to the history and returns it.
     * Blocks until the answer ends: the model ends it, the token limit or the context is reached, or
     * {@code cancellation} (or {@link #close}) stops it. A cancelled answer stays in the history as far as it went;
     * cancelled before its first token, the messages leave no trace, as if they had not been sent.
     *
     * @throws FsException when the history no longer fits the chat's context (the history is left as it was: start a
     *     new chat), the chat or the model is closed, this chat is already answering, too many sends wait for a slot,
     *     the generation fails, or the thread is interrupted (then the answer is cancelled)
     */
    public Reply send(List<Message> messages, TokenConsumer onText, Cancellation cancellation) {
        Objects.requireNonNull(messages, "messages");
        Objects.requireNonNull(onText, "onText");
        Objects.requireNonNull(cancellation, "cancellation");
        if (!sending.compareAndSet(false, true)) {
            throw new FsException("this chat is already answering a message: send one at a time, or start another "
                    + "chat to ask in parallel");
        }
        try {
            if (closing.isCancelled()) throw new FsException("the chat is closed");
            if (model.isClosed()) throw new FsException("the model is closed");
            if (messages.isEmpty()) throw new FsException("there is no message to answer");
            for (Message message : messages) {
                if (Objects.requireNonNull(message, "a message to send is null").role() == Message.Role.ASSISTANT) {
                    throw new FsException("only the user's messages and tools' results are sent: the model answers");
                }
            }
            int before = history.size();
            for (Message message : messages) history.add(Turn.of(message));
            try {
                Reply reply = answer(onText, cancellation);
                if (reply.stopReason() == StopReason.CANCELLED && reply.generatedTokens() == 0) {
                    history.subList(before, history.size()).clear();
                } else {
                    Message answer = Message.assistant(reply.text(), reply.toolCalls());
                    history.add(new Turn(answer, new ChatMessage("assistant", reply.text(),
                            reply.reasoning().isEmpty() ? null : reply.reasoning(), calls(reply.toolCalls()))));
                }
                return reply;
            } catch (RuntimeException | Error e) {
                history.subList(before, history.size()).clear();
                throw e;
            }
        } finally {
            sending.set(false);
        }
    }

    /** Whether the model is shown the tools and its answer looked through for calls. */
    private boolean toolsOffered() {
        return !params.tools().isEmpty() && params.toolChoice() != ToolChoice.NONE;
    }

    /**
     * What holds an answer to the chat's shape, null when it is free: calls of its tools from the first token when
     * they are required, a well-formed call after a {@code <tool_call>} the model writes when it may choose, or JSON
     * of the response schema. With thinking on, Qwen3 may think first (see {@link AnswerGrammar}).
     */
    private TokenConstraint constraint() {
        boolean thinkFirst = !Boolean.FALSE.equals(params.thinking());
        if (toolsOffered()) {
            List<AnswerGrammar.Function> functions = params.tools().stream()
                    .map(tool -> new AnswerGrammar.Function(tool.name(), tool.parametersSchema())).toList();
            return params.toolChoice() == ToolChoice.REQUIRED
                    ? model.constraint(AnswerGrammar.toolCalls(functions, true, thinkFirst))
                    : model.modelOpenedCalls(AnswerGrammar.afterToolCallTag(functions, true), thinkFirst);
        }
        if (params.responseSchema() == null) return null;
        return model.constraint(AnswerGrammar.json(Tool.schema(params.responseSchema(), "the response schema"),
                thinkFirst));
    }

    private Reply answer(TokenConsumer onText, Cancellation cancellation) {
        List<JsonNode> tools = toolsOffered() ? params.tools().stream().map(Tool::definition).toList() : List.of();
        int[] prompt = chatPrompt.nextTurn(params.systemPrompt(), history.stream().map(Turn::rendered).toList(), tools,
                params.thinking());
        // Cancelled already: never submitted, since the scheduler could take a token before the hook below is set.
        if (cancellation.isCancelled()) return new Reply("", "", StopReason.CANCELLED, prompt.length, 0, 0, List.of());
        Answer answer = new Answer();
        Scheduler.Handle handle = model.submit(prompt, sampling, params.maxTokens(), constraint(), answer);
        Runnable unregister = cancellation.register(handle::cancel);
        Runnable unregisterClose = closing.register(handle::cancel);
        // Special tokens (a stray <|im_start|>) are no text for the user; <think> is not special: the splitter sees it.
        StreamingDecoder decoder = model.tokenizer().streamingDecoder(true);
        int knownIds = model.tokenizer().vocabSize();
        Delivery out = new Delivery(onText, toolsOffered() ? new ToolCallSplitter() : null);
        ReasoningSplitter splitter = new ReasoningSplitter();
        try {
            while (true) {
                switch (answer.take()) {
                    case Answer.Event.Token token -> {
                        // The model's padding rows past the vocabulary have no text (Hugging Face's decode skips them).
                        if (token.id() >= knownIds) continue;
                        out.deliver(splitter.push(decoder.push(token.id())));
                    }
                    case Answer.Event.Done done -> {
                        out.deliver(splitter.push(decoder.flush()));
                        out.deliver(splitter.flush());
                        out.end();
                        return new Reply(out.text.toString(), out.reasoning.toString(), done.reason(), prompt.length,
                                done.stats().cachedTokens(), done.stats().generatedTokens(), out.calls);
                    }
                    case Answer.Event.Failed failed -> throw failed.error() instanceof FsException e
                            ? new FsException(e.getMessage(), e)
                            : new FsException("the generation failed: " + failed.error(), failed.error());
                }
            }
        } catch (InterruptedException e) {
            handle.cancel();
            Thread.currentThread().interrupt();
            throw new FsException("interrupted while waiting for the answer", e);
        } catch (RuntimeException | Error e) {
            handle.cancel(); // the consumer threw: the answer is not wanted any more
            throw e;
        } finally {
            unregister.run();
            unregisterClose.run();
        }
    }

    /** An answer's pieces on their way to the consumer: reasoning, text, and (with tools offered) the calls. */
    private static final class Delivery {
        final StringBuilder text = new StringBuilder();
        final StringBuilder reasoning = new StringBuilder();
        final List<ToolCall> calls = new ArrayList<>();
        private final TokenConsumer onText;
        private final ToolCallSplitter toolCalls; // null: no tools offered, the content is all text

        Delivery(TokenConsumer onText, ToolCallSplitter toolCalls) {
            this.onText = onText;
            this.toolCalls = toolCalls;
        }

        void deliver(ReasoningSplitter.Delta delta) {
            if (!delta.reasoning().isEmpty()) {
                reasoning.append(delta.reasoning());
                onText.onReasoning(delta.reasoning());
            }
            if (delta.content().isEmpty()) return;
            if (toolCalls == null) text(delta.content());
            else pieces(toolCalls.push(delta.content()));
        }

        /** The end of the answer: a call block that never closed is text. */
        void end() {
            if (toolCalls != null) pieces(toolCalls.flush());
        }

        private void pieces(List<ToolCallSplitter.Piece> pieces) {
            for (ToolCallSplitter.Piece piece : pieces) {
                switch (piece) {
                    case ToolCallSplitter.Piece.Text t -> text(t.text());
                    case ToolCallSplitter.Piece.Closed c -> {
                        // A call the token limit cut short is no call to run: the stop reason says why it is missing.
                        if (c.complete()) calls.add(new ToolCall(c.call().id(), c.call().name(), c.call().arguments()));
                    }
                    case ToolCallSplitter.Piece.Opened _, ToolCallSplitter.Piece.Arguments _ -> {
                        // A reply carries whole calls only.
                    }
                }
            }
        }

        private void text(String piece) {
            text.append(piece);
            onText.onText(piece);
        }
    }

    /**
     * The conversation so far, oldest first, without the system prompt; an answer as its text and tool calls, without
     * its reasoning. Call it between sends (while this chat answers, it fails).
     */
    public List<Message> history() {
        if (!sending.compareAndSet(false, true)) {
            throw new FsException("this chat is answering a message: its history is not settled yet");
        }
        try {
            return history.stream().map(Turn::message).toList();
        } finally {
            sending.set(false);
        }
    }

    /** Stops the answer that is running, if any (it ends as cancelled), and ends the chat: later sends fail. */
    @Override
    public void close() {
        closing.cancel();
    }
}
