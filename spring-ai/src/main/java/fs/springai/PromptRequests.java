package fs.springai;

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
import java.util.Map;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.metadata.ChatGenerationMetadata;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.StructuredOutputChatOptions;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * Turns Spring AI's prompts into a chat of the facade and its replies into Spring AI's responses. A prompt holds the
 * whole conversation: its system message becomes the chat's system prompt, the earlier messages its history, and the
 * last ones, the user's message or the results of the tools the model called, what is sent. The options' tool
 * callbacks become the chat's tools (their calls come back in the assistant message, for ChatClient's tool calling
 * advisor or the caller's {@code ToolCallingManager} to run; the model runs none), their output schema its response
 * schema. What fs cannot do (stop sequences, images) is refused, never ignored.
 */
final class PromptRequests {
    /** The assistant message's property (and the generation's metadata) holding the model's reasoning, as OpenAI's. */
    static final String REASONING = "reasoningContent";

    private PromptRequests() {}

    /** A chat ready to answer {@code messages}, and the model's name for the response. */
    record Prepared(Chat chat, List<Message> messages, String modelName) {}

    static Prepared prepare(FsModel model, ChatOptions options, Prompt prompt) {
        ChatParams params = parameters(options);
        List<org.springframework.ai.chat.messages.Message> messages = prompt.getInstructions();
        // What is sent: the last user message, or the results of the calls of the last answer.
        int sent = messages.size() - 1;
        while (sent > 0 && messages.get(sent) instanceof ToolResponseMessage
                && messages.get(sent - 1) instanceof ToolResponseMessage) {
            sent--;
        }
        List<Message> history = new ArrayList<>();
        List<Message> toSend = new ArrayList<>();
        String system = null;
        for (int i = 0; i < messages.size(); i++) {
            var message = messages.get(i);
            boolean first = i == 0, last = i == messages.size() - 1;
            List<Message> into = i >= sent ? toSend : history;
            switch (message) {
                case SystemMessage s when first && !last -> system = s.getText();
                case SystemMessage _ -> throw new FsException("a system message must come first, before the user's");
                case UserMessage u when !u.getMedia().isEmpty() ->
                        throw new FsException("fs takes text messages only (no images or audio)");
                case UserMessage u -> into.add(Message.user(u.getText()));
                case AssistantMessage _ when last -> throw new FsException("the last message must be the user's or "
                        + "a tool's result: it is what the model answers");
                case AssistantMessage a -> history.add(Message.assistant(a.getText() != null ? a.getText() : "",
                        a.getToolCalls().stream().map(c -> new ToolCall(c.id(), c.name(),
                                c.arguments().isEmpty() ? "{}" : c.arguments())).toList()));
                case ToolResponseMessage r -> r.getResponses()
                        .forEach(response -> into.add(Message.toolResult(response.id(), response.responseData())));
                default -> throw new FsException("fs does not support " + message.getMessageType() + " messages");
            }
        }
        if (toSend.isEmpty()) {
            throw new FsException("the last message must be the user's: it is what the model answers");
        }
        if (system != null) params = params.withSystemPrompt(system);
        return new Prepared(model.newChat(params, history), toSend, options.getModel() != null ? options.getModel()
                : "");
    }

    /** The options as the facade's parameters: a null option keeps the model's default. */
    private static ChatParams parameters(ChatOptions options) {
        if (options.getStopSequences() != null && !options.getStopSequences().isEmpty()) {
            throw new FsException("fs does not support stop sequences");
        }
        ChatParams params = ChatParams.defaults();
        if (options.getTemperature() != null) params = params.withTemperature(options.getTemperature().floatValue());
        if (options.getTopK() != null) params = params.withTopK(options.getTopK());
        if (options.getTopP() != null) params = params.withTopP(options.getTopP().floatValue());
        if (options.getPresencePenalty() != null) {
            params = params.withPresencePenalty(options.getPresencePenalty().floatValue());
        }
        if (options.getFrequencyPenalty() != null) {
            params = params.withFrequencyPenalty(options.getFrequencyPenalty().floatValue());
        }
        if (options.getMaxTokens() != null) params = params.withMaxTokens(options.getMaxTokens());
        ToolChoice toolChoice = ToolChoice.AUTO;
        if (options instanceof FsChatOptions fs) {
            if (fs.getToolChoice() != null) toolChoice = fs.getToolChoice();
            if (fs.getSeed() != null) params = params.withSeed(fs.getSeed());
            if (fs.getThinking() != null) params = params.withThinking(fs.getThinking());
        }
        if (options instanceof ToolCallingChatOptions tools && tools.getToolCallbacks() != null
                && !tools.getToolCallbacks().isEmpty()) {
            List<Tool> offered = new ArrayList<>();
            for (ToolCallback callback : tools.getToolCallbacks()) {
                ToolDefinition definition = callback.getToolDefinition();
                offered.add(Tool.of(definition.name(), definition.description(), definition.inputSchema()));
            }
            params = params.withTools(offered);
        }
        params = params.withToolChoice(toolChoice);
        // An answer that must call tools is calls only: the schema holds the answers after the calls' results.
        if (options instanceof StructuredOutputChatOptions structured && structured.getOutputSchema() != null
                && toolChoice != ToolChoice.REQUIRED) {
            params = params.withResponseSchema(structured.getOutputSchema());
        }
        return params;
    }

    /**
     * The reply as Spring AI's response: {@code text} (the reply's, or when streaming none: the pieces have brought
     * it), the whole reasoning, the calls, the finish reason and the token usage.
     */
    static ChatResponse response(String text, Reply reply, String modelName) {
        Map<String, Object> properties = reply.reasoning().isEmpty() ? Map.of() : Map.of(REASONING, reply.reasoning());
        AssistantMessage message = AssistantMessage.builder().content(text).properties(properties)
                .toolCalls(reply.toolCalls().stream().map(call -> new AssistantMessage.ToolCall(call.id(), "function",
                        call.name(), call.arguments())).toList())
                .build();
        ChatGenerationMetadata generation = ChatGenerationMetadata.builder().finishReason(finishReason(reply)).build();
        ChatResponseMetadata metadata = ChatResponseMetadata.builder().model(modelName)
                .usage(new DefaultUsage(reply.promptTokens(), reply.generatedTokens())).build();
        return new ChatResponse(List.of(new Generation(message, generation)), metadata);
    }

    /** Why the answer ended, named as Spring AI's OpenAI model names it. */
    private static String finishReason(Reply reply) {
        if (!reply.toolCalls().isEmpty()) return "TOOL_CALLS";
        return switch (reply.stopReason()) {
            case END_OF_SEQUENCE -> "STOP";
            case TOKEN_LIMIT, CONTEXT_FULL -> "LENGTH";
            case CANCELLED -> "CANCELLED";
        };
    }

    /** A piece of a streamed answer: its text, or (with empty text) a piece of the model's reasoning. */
    static ChatResponse piece(String text, String reasoning) {
        AssistantMessage message = AssistantMessage.builder().content(text)
                .properties(reasoning.isEmpty() ? Map.of() : Map.of(REASONING, reasoning)).build();
        return new ChatResponse(List.of(new Generation(message)));
    }
}
