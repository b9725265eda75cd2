package fs.langchain4j;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import fs.FsException;
import fs.api.Chat;
import fs.api.ChatParams;
import fs.api.FsModel;
import fs.api.Message;
import fs.api.Reply;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns LangChain4j's requests into a chat of the facade and its replies into LangChain4j's responses; both providers
 * share it. LangChain4j sends the whole conversation with every request: its system message becomes the chat's system
 * prompt, the earlier messages its history, and the last one, which must be the user's, the message sent. What fs
 * cannot do (tools, stop sequences, JSON mode, images) is refused, never ignored.
 */
final class ChatRequests {
    private ChatRequests() {}

    /** A chat ready to answer {@code message}. */
    record Prepared(Chat chat, String message) {}

    static Prepared prepare(FsModel model, ChatParams defaults, ChatRequest request) {
        ChatParams params = parameters(defaults, request);
        List<ChatMessage> messages = request.messages();
        List<Message> history = new ArrayList<>();
        String system = null;
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage message = messages.get(i);
            boolean first = i == 0, last = i == messages.size() - 1;
            switch (message) {
                case SystemMessage s when first && !last -> system = s.text();
                case SystemMessage _ -> throw new FsException("a system message must come first, before the user's");
                case UserMessage u when !u.hasSingleText() ->
                        throw new UnsupportedFeatureException("fs takes text messages only (no images or audio)");
                case UserMessage u -> {
                    if (!last) history.add(Message.user(u.singleText()));
                }
                case AiMessage a when a.hasToolExecutionRequests() ->
                        throw new UnsupportedFeatureException("fs does not support tools");
                case AiMessage a -> history.add(Message.assistant(a.text() != null ? a.text() : ""));
                default -> throw new UnsupportedFeatureException("fs does not support " + message.type() + " messages");
            }
        }
        if (!(messages.getLast() instanceof UserMessage user)) {
            throw new FsException("the last message must be the user's: it is what the model answers");
        }
        if (system != null) params = params.withSystemPrompt(system);
        return new Prepared(model.newChat(params, history), user.singleText());
    }

    private static ChatParams parameters(ChatParams params, ChatRequest request) {
        if (request.toolSpecifications() != null && !request.toolSpecifications().isEmpty()) {
            throw new UnsupportedFeatureException("fs does not support tools");
        }
        if (request.stopSequences() != null && !request.stopSequences().isEmpty()) {
            throw new UnsupportedFeatureException("fs does not support stop sequences");
        }
        if (request.responseFormat() != null && !request.responseFormat().equals(ResponseFormat.TEXT)) {
            throw new UnsupportedFeatureException("fs answers in text only (no JSON response format)");
        }
        if (request.temperature() != null) params = params.withTemperature(request.temperature().floatValue());
        if (request.topP() != null) params = params.withTopP(request.topP().floatValue());
        if (request.topK() != null) params = params.withTopK(request.topK());
        if (request.presencePenalty() != null) {
            params = params.withPresencePenalty(request.presencePenalty().floatValue());
        }
        if (request.frequencyPenalty() != null) {
            params = params.withFrequencyPenalty(request.frequencyPenalty().floatValue());
        }
        if (request.maxOutputTokens() != null) params = params.withMaxTokens(request.maxOutputTokens());
        return params;
    }

    static ChatResponse response(Reply reply) {
        AiMessage message = AiMessage.builder()
                .text(reply.text())
                .thinking(reply.reasoning().isEmpty() ? null : reply.reasoning())
                .build();
        return ChatResponse.builder()
                .aiMessage(message)
                .tokenUsage(new TokenUsage(reply.promptTokens(), reply.generatedTokens()))
                .finishReason(switch (reply.stopReason()) {
                    case END_OF_SEQUENCE -> FinishReason.STOP;
                    case TOKEN_LIMIT, CONTEXT_FULL -> FinishReason.LENGTH;
                    case CANCELLED -> FinishReason.OTHER;
                })
                .build();
    }
}
