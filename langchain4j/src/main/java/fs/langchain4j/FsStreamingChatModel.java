package fs.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import fs.api.Cancellation;
import fs.api.ChatParams;
import fs.api.FsModel;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * LangChain4j's {@link StreamingChatModel} on a model loaded in this JVM: as {@link FsChatModel}, but each request
 * returns at once and is answered on a virtual thread of its own, which calls the handler: the answer's text through
 * {@code onPartialResponse}, the reasoning of a model that thinks (Qwen3's {@code <think>} block) through
 * {@code onPartialThinking}, the tool calls through {@code onCompleteToolCall} once the answer is done, then
 * {@code onCompleteResponse}, or {@code onError} with an {@link fs.FsException} or
 * {@link dev.langchain4j.exception.UnsupportedFeatureException}. Thread-safe; closing the {@link FsModel} is the
 * caller's (answers still running then end).
 */
public final class FsStreamingChatModel implements StreamingChatModel {
    private final FsModel model;
    private final ChatParams defaults;

    /** Answers with {@code model}, sampling with {@code defaults} where a request does not say. */
    public FsStreamingChatModel(FsModel model, ChatParams defaults) {
        this.model = Objects.requireNonNull(model, "model");
        this.defaults = Objects.requireNonNull(defaults, "defaults");
    }

    /** Starts answering the request's last (user) message; every outcome reaches {@code handler}. */
    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
        Objects.requireNonNull(handler, "handler");
        Thread.ofVirtual().name("fs-langchain4j").start(() -> {
            ChatResponse response;
            try {
                ChatRequests.Prepared prepared = ChatRequests.prepare(model, defaults, request);
                try (var chat = prepared.chat()) {
                    response = ChatRequests.response(
                            chat.send(prepared.messages(), new StreamingConsumer(handler), new Cancellation()));
                }
            } catch (RuntimeException e) { // the request's, the model's or the handler's own (it stopped the answer)
                handler.onError(e);
                return;
            }
            List<ToolExecutionRequest> calls = response.aiMessage().toolExecutionRequests();
            for (int i = 0; i < calls.size(); i++) handler.onCompleteToolCall(new CompleteToolCall(i, calls.get(i)));
            handler.onCompleteResponse(response);
        });
    }

    /** A JSON schema response format is held by grammar: AiServices may ask for structured outputs. */
    @Override
    public Set<Capability> supportedCapabilities() {
        return Set.of(Capability.RESPONSE_FORMAT_JSON_SCHEMA);
    }
}
