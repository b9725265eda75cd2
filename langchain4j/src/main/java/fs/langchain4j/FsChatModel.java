package fs.langchain4j;

import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import fs.api.Cancellation;
import fs.api.ChatParams;
import fs.api.FsModel;
import java.util.Objects;
import java.util.Set;

/**
 * LangChain4j's {@link ChatModel} on a model loaded in this JVM. Each request is answered by a new
 * {@link fs.api.Chat} holding the request's conversation; the model's scheduler reuses the KV cache for what an
 * earlier request's slot already holds. The request's temperature, top-p, top-k and max output tokens override
 * {@code defaults}; the reasoning of a model that thinks is the answer's {@code thinking}. Tools and their choice, and
 * a JSON response format with its schema, hold the answer to calls or to the schema token by token (so AiServices'
 * {@code @Tool} methods and structured outputs work). Thread-safe; closing the {@link FsModel} is the caller's.
 */
public final class FsChatModel implements ChatModel {
    private final FsModel model;
    private final ChatParams defaults;

    /** Answers with {@code model}, sampling with {@code defaults} where a request does not say. */
    public FsChatModel(FsModel model, ChatParams defaults) {
        this.model = Objects.requireNonNull(model, "model");
        this.defaults = Objects.requireNonNull(defaults, "defaults");
    }

    /**
     * Answers the request's last (user) message, blocking until the answer ends.
     *
     * @throws fs.FsException when the conversation does not fit the context or generation fails
     * @throws dev.langchain4j.exception.UnsupportedFeatureException for stop sequences and non-text messages
     */
    @Override
    public ChatResponse doChat(ChatRequest request) {
        ChatRequests.Prepared prepared = ChatRequests.prepare(model, defaults, request);
        try (var chat = prepared.chat()) {
            return ChatRequests.response(chat.send(prepared.messages(), text -> {}, new Cancellation()));
        }
    }

    /** A JSON schema response format is held by grammar: AiServices may ask for structured outputs. */
    @Override
    public Set<Capability> supportedCapabilities() {
        return Set.of(Capability.RESPONSE_FORMAT_JSON_SCHEMA);
    }
}
