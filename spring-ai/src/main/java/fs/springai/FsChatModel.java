package fs.springai;

import fs.api.Cancellation;
import fs.api.FsModel;
import fs.api.Reply;
import fs.api.TokenConsumer;
import java.util.Objects;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * Spring AI's {@link ChatModel} on a model loaded in this JVM. Each prompt is answered by a new {@link fs.api.Chat}
 * holding its conversation; the model's scheduler reuses the KV cache for what an earlier prompt's slot already holds.
 * A prompt's options ({@link FsChatOptions}, or any {@link ChatOptions}) replace the model's as Spring AI's models do:
 * ChatClient starts from {@link #getOptions()} and adds the call's. The model returns the tool calls it makes (finish
 * reason TOOL_CALLS) and runs none: ChatClient's tool calling advisor runs them and sends their results back. An
 * output schema holds the answer by grammar, so ChatClient's native structured output gives well-formed entities. The
 * usage counts the prompt's tokens and the answer's; Qwen3's reasoning is the message's {@code reasoningContent}
 * property. Thread-safe; closing the {@link FsModel} is the caller's.
 */
public final class FsChatModel implements ChatModel {
    private final FsModel model;
    private final FsChatOptions options;

    /** Answers with {@code model}, with {@code options} for a prompt that has none. */
    public FsChatModel(FsModel model, FsChatOptions options) {
        this.model = Objects.requireNonNull(model, "model");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Answers the prompt's last (user) message, or the results of the calls of the answer before, blocking until
     * the answer ends.
     *
     * @throws fs.FsException when the conversation does not fit the context, asks for what fs cannot do (stop
     *     sequences, images) or generation fails
     */
    @Override
    public ChatResponse call(Prompt prompt) {
        PromptRequests.Prepared prepared = PromptRequests.prepare(model, optionsOf(prompt), prompt);
        try (var chat = prepared.chat()) {
            Reply reply = chat.send(prepared.messages(), text -> {}, new Cancellation());
            return PromptRequests.response(reply.text(), reply, prepared.modelName());
        }
    }

    /**
     * Answers as {@link #call} on a virtual thread of its own, once subscribed: a response per piece of the text (or
     * of the reasoning, as the {@code reasoningContent} property with empty text), then one with no text that holds
     * the calls, the whole reasoning, the finish reason and the usage. Cancelling the subscription stops the answer;
     * an {@link fs.FsException} ends the flux as its error.
     */
    @Override
    public Flux<ChatResponse> stream(Prompt prompt) {
        return Flux.create(sink -> {
            Cancellation cancellation = new Cancellation();
            sink.onDispose(cancellation::cancel);
            Thread.ofVirtual().name("fs-spring-ai").start(() -> answer(prompt, sink, cancellation));
        });
    }

    private void answer(Prompt prompt, FluxSink<ChatResponse> sink, Cancellation cancellation) {
        try {
            PromptRequests.Prepared prepared = PromptRequests.prepare(model, optionsOf(prompt), prompt);
            try (var chat = prepared.chat()) {
                Reply reply = chat.send(prepared.messages(), new TokenConsumer() {
                    @Override
                    public void onText(String text) {
                        sink.next(PromptRequests.piece(text, ""));
                    }

                    @Override
                    public void onReasoning(String text) {
                        sink.next(PromptRequests.piece("", text));
                    }
                }, cancellation);
                sink.next(PromptRequests.response("", reply, prepared.modelName()));
            }
            sink.complete();
        } catch (RuntimeException e) {
            sink.error(e);
        }
    }

    private ChatOptions optionsOf(Prompt prompt) {
        return prompt.getOptions() != null ? prompt.getOptions() : options;
    }

    /** The options a prompt without its own is answered with; ChatClient builds each call's from them. */
    @Override
    public FsChatOptions getOptions() {
        return options;
    }
}
