package fs.langchain4j;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.UnsupportedFeatureException;
import dev.langchain4j.internal.JsonSchemaElementUtils;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.request.json.JsonRawSchema;
import dev.langchain4j.model.chat.request.json.JsonSchemaElement;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import fs.FsException;
import fs.api.Chat;
import fs.api.ChatParams;
import fs.api.FsModel;
import fs.api.Message;
import fs.api.Reply;
import fs.api.Tool;
import fs.api.ToolCall;
import fs.api.ToolChoice;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns LangChain4j's requests into a chat of the facade and its replies into LangChain4j's responses; both providers
 * share it. LangChain4j sends the whole conversation with every request: its system message becomes the chat's system
 * prompt, the earlier messages its history, and the last ones, the user's message or the results of the tools the
 * model called, what is sent. Tool specifications become the chat's tools (their calls come back as tool execution
 * requests), a JSON response format its response schema. What fs cannot do (stop sequences, images) is refused, never
 * ignored.
 */
final class ChatRequests {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The schema of a JSON response format without one: any object. */
    private static final String ANY_OBJECT = "{\"type\": \"object\", \"additionalProperties\": true}";

    private ChatRequests() {}

    /** A chat ready to answer {@code messages}. */
    record Prepared(Chat chat, List<Message> messages) {}

    static Prepared prepare(FsModel model, ChatParams defaults, ChatRequest request) {
        ChatParams params = parameters(defaults, request);
        List<ChatMessage> messages = request.messages();
        // What is sent: the last user message, or the results of the calls of the last answer.
        int sent = messages.size() - 1;
        while (sent > 0 && messages.get(sent) instanceof ToolExecutionResultMessage
                && messages.get(sent - 1) instanceof ToolExecutionResultMessage) {
            sent--;
        }
        List<Message> history = new ArrayList<>();
        List<Message> toSend = new ArrayList<>();
        String system = null;
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage message = messages.get(i);
            boolean first = i == 0, last = i == messages.size() - 1;
            List<Message> into = i >= sent ? toSend : history;
            switch (message) {
                case SystemMessage s when first && !last -> system = s.text();
                case SystemMessage _ -> throw new FsException("a system message must come first, before the user's");
                case UserMessage u when !u.hasSingleText() ->
                        throw new UnsupportedFeatureException("fs takes text messages only (no images or audio)");
                case UserMessage u -> into.add(Message.user(u.singleText()));
                case AiMessage a when last -> throw new FsException("the last message must be the user's or a tool's "
                        + "result: it is what the model answers");
                case AiMessage a -> history.add(Message.assistant(a.text() != null ? a.text() : "",
                        a.hasToolExecutionRequests() ? calls(a.toolExecutionRequests()) : List.of()));
                case ToolExecutionResultMessage r -> into.add(Message.toolResult(r.id(), r.text()));
                default -> throw new UnsupportedFeatureException("fs does not support " + message.type() + " messages");
            }
        }
        if (toSend.isEmpty()) {
            throw new FsException("the last message must be the user's: it is what the model answers");
        }
        if (system != null) params = params.withSystemPrompt(system);
        return new Prepared(model.newChat(params, history), toSend);
    }

    private static List<ToolCall> calls(List<ToolExecutionRequest> requests) {
        List<ToolCall> calls = new ArrayList<>();
        for (ToolExecutionRequest request : requests) {
            calls.add(new ToolCall(request.id() != null ? request.id() : "", request.name(),
                    request.arguments() != null ? request.arguments() : "{}"));
        }
        return calls;
    }

    private static ChatParams parameters(ChatParams params, ChatRequest request) {
        if (request.stopSequences() != null && !request.stopSequences().isEmpty()) {
            throw new UnsupportedFeatureException("fs does not support stop sequences");
        }
        List<ToolSpecification> specifications = request.toolSpecifications();
        if (specifications != null && !specifications.isEmpty()) {
            List<Tool> tools = new ArrayList<>();
            for (ToolSpecification specification : specifications) {
                tools.add(Tool.of(specification.name(), specification.description(),
                        specification.parameters() != null ? schema(specification.parameters()) : null));
            }
            params = params.withTools(tools);
        }
        if (request.toolChoice() != null) {
            params = params.withToolChoice(switch (request.toolChoice()) {
                case AUTO -> ToolChoice.AUTO;
                case REQUIRED -> ToolChoice.REQUIRED;
                case NONE -> ToolChoice.NONE;
            });
        }
        ResponseFormat format = request.responseFormat();
        if (format != null && format.type() == ResponseFormatType.JSON) {
            params = params.withResponseSchema(format.jsonSchema() != null && format.jsonSchema().rootElement() != null
                    ? schema(format.jsonSchema().rootElement()) : ANY_OBJECT);
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

    /** LangChain4j's schema as JSON Schema text: a raw schema as it is, any other through LangChain4j's own map. */
    private static String schema(JsonSchemaElement element) {
        if (element instanceof JsonRawSchema raw) return raw.schema();
        try {
            return JSON.writeValueAsString(JsonSchemaElementUtils.toMap(element));
        } catch (JsonProcessingException e) {
            throw new FsException("a JSON schema of LangChain4j cannot be written as JSON: " + e.getOriginalMessage());
        }
    }

    static ChatResponse response(Reply reply) {
        AiMessage.Builder message = AiMessage.builder()
                .text(reply.text().isEmpty() && !reply.toolCalls().isEmpty() ? null : reply.text())
                .thinking(reply.reasoning().isEmpty() ? null : reply.reasoning());
        if (!reply.toolCalls().isEmpty()) message.toolExecutionRequests(toolRequests(reply));
        return ChatResponse.builder()
                .aiMessage(message.build())
                .tokenUsage(new TokenUsage(reply.promptTokens(), reply.generatedTokens()))
                .finishReason(!reply.toolCalls().isEmpty() ? FinishReason.TOOL_EXECUTION : switch (reply.stopReason()) {
                    case END_OF_SEQUENCE -> FinishReason.STOP;
                    case TOKEN_LIMIT, CONTEXT_FULL -> FinishReason.LENGTH;
                    case CANCELLED -> FinishReason.OTHER;
                })
                .build();
    }

    /** The reply's calls as LangChain4j's tool execution requests. */
    static List<ToolExecutionRequest> toolRequests(Reply reply) {
        return reply.toolCalls().stream().map(call -> ToolExecutionRequest.builder().id(call.id()).name(call.name())
                .arguments(call.arguments()).build()).toList();
    }
}
