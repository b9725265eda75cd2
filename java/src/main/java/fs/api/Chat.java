package fs.api;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.generate.ReasoningSplitter;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.generate.StopReason;
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
    private final Cancellation closing = new Cancellation();
    private final AtomicBoolean sending = new AtomicBoolean();
    // Touched only by the thread that holds `sending`.
    private final List<ChatMessage> history = new ArrayList<>();

    Chat(FsModel model, ChatParams params, SamplingParams sampling, List<Message> earlier) {
        this.model = model;
        this.params = params;
        this.sampling = sampling;
        if (params.systemPrompt() != null) history.add(ChatMessage.system(params.systemPrompt()));
        for (Message m : earlier) {
            Objects.requireNonNull(m, "a message of the history is null");
            history.add(m.role() == Message.Role.USER ? ChatMessage.user(m.text()) : ChatMessage.assistant(m.text()));
        }
    }

    /** {@link #send(String, TokenConsumer, Cancellation)} with no way to cancel but {@link #close}. */
    public Reply send(String message, TokenConsumer onText) {
        return send(message, onText, new Cancellation());
    }

    /**
     * Answers {@code message}: adds it to the history, generates the answer and streams its text (and, apart, the
     * model's reasoning) to {@code onText} on this thread as it comes, then adds the answer to the history and returns
     * it. Blocks until the answer ends: the model ends it, the token limit or the context is reached, or
     * {@code cancellation} (or {@link #close}) stops it. A cancelled answer stays in the history as far as it went;
     * cancelled before its first token, the message leaves no trace, as if it had not been sent.
     *
     * @throws FsException when the history no longer fits the chat's context (the history is left as it was: start a
     *     new chat), the chat or the model is closed, this chat is already answering, too many sends wait for a slot,
     *     the generation fails, or the thread is interrupted (then the answer is cancelled)
     */
    public Reply send(String message, TokenConsumer onText, Cancellation cancellation) {
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(onText, "onText");
        Objects.requireNonNull(cancellation, "cancellation");
        if (!sending.compareAndSet(false, true)) {
            throw new FsException("this chat is already answering a message: send one at a time, or start another "
                    + "chat to ask in parallel");
        }
        try {
            if (closing.isCancelled()) throw new FsException("the chat is closed");
            if (model.isClosed()) throw new FsException("the model is closed");
            history.add(ChatMessage.user(message));
            try {
                Reply reply = answer(onText, cancellation);
                if (reply.stopReason() == StopReason.CANCELLED && reply.generatedTokens() == 0) {
                    history.removeLast();
                } else {
                    history.add(new ChatMessage("assistant", reply.text(),
                            reply.reasoning().isEmpty() ? null : reply.reasoning(), List.of()));
                }
                return reply;
            } catch (RuntimeException | Error e) {
                history.removeLast();
                throw e;
            }
        } finally {
            sending.set(false);
        }
    }

    private Reply answer(TokenConsumer onText, Cancellation cancellation) {
        int[] prompt = model.tokenizer().encode(model.template().render(history, true, params.thinking()));
        // Cancelled already: never submitted, since the scheduler could take a token before the hook below is set.
        if (cancellation.isCancelled()) return new Reply("", "", StopReason.CANCELLED, prompt.length, 0, 0);
        Answer answer = new Answer();
        Scheduler.Handle handle = model.submit(prompt, sampling, params.maxTokens(), answer);
        Runnable unregister = cancellation.register(handle::cancel);
        Runnable unregisterClose = closing.register(handle::cancel);
        // Special tokens (a stray <|im_start|>) are no text for the user; <think> is not special: the splitter sees it.
        StreamingDecoder decoder = model.tokenizer().streamingDecoder(true);
        int knownIds = model.tokenizer().vocabSize();
        ReasoningSplitter splitter = new ReasoningSplitter();
        StringBuilder text = new StringBuilder();
        StringBuilder reasoning = new StringBuilder();
        try {
            while (true) {
                switch (answer.take()) {
                    case Answer.Event.Token token -> {
                        // The model's padding rows past the vocabulary have no text (Hugging Face's decode skips them).
                        if (token.id() >= knownIds) continue;
                        deliver(splitter.push(decoder.push(token.id())), onText, text, reasoning);
                    }
                    case Answer.Event.Done done -> {
                        deliver(splitter.push(decoder.flush()), onText, text, reasoning);
                        deliver(splitter.flush(), onText, text, reasoning);
                        return new Reply(text.toString(), reasoning.toString(), done.reason(), prompt.length,
                                done.stats().cachedTokens(), done.stats().generatedTokens());
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

    private static void deliver(ReasoningSplitter.Delta delta, TokenConsumer onText, StringBuilder text,
                                StringBuilder reasoning) {
        if (!delta.reasoning().isEmpty()) {
            reasoning.append(delta.reasoning());
            onText.onReasoning(delta.reasoning());
        }
        if (!delta.content().isEmpty()) {
            text.append(delta.content());
            onText.onText(delta.content());
        }
    }

    /**
     * The conversation so far, oldest first, without the system prompt; an answer as its text, without its reasoning.
     * Call it between sends (while this chat answers, it fails).
     */
    public List<Message> history() {
        if (!sending.compareAndSet(false, true)) {
            throw new FsException("this chat is answering a message: its history is not settled yet");
        }
        try {
            List<Message> messages = new ArrayList<>();
            for (ChatMessage m : history) {
                if (m.role().equals("user")) messages.add(Message.user(m.content()));
                else if (m.role().equals("assistant")) messages.add(Message.assistant(m.content()));
            }
            return List.copyOf(messages);
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
