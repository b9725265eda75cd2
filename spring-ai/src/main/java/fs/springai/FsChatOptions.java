package fs.springai;

import fs.api.ToolChoice;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.model.tool.DefaultToolCallingChatOptions;
import org.springframework.ai.model.tool.StructuredOutputChatOptions;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;

/**
 * The options of a {@link FsChatModel} request: Spring AI's portable ones (sampling, max tokens), its tools
 * ({@link ToolCallingChatOptions}: their calls come back in the answer, and ChatClient's tool calling advisor runs
 * them) and its output schema ({@link StructuredOutputChatOptions}: ChatClient sets it for native structured output,
 * and it holds the answer token by token), plus fs's own: the tool choice, the seed and whether Qwen3 thinks. A null
 * field takes the model's default (its generation_config.json). Stop sequences are refused by the model, never
 * ignored. Immutable; {@link #mutate()} gives a builder holding the same values.
 */
public final class FsChatOptions implements ToolCallingChatOptions, StructuredOutputChatOptions {
    private final @Nullable String model;
    private final @Nullable Double frequencyPenalty;
    private final @Nullable Integer maxTokens;
    private final @Nullable Double presencePenalty;
    private final @Nullable List<String> stopSequences;
    private final @Nullable Double temperature;
    private final @Nullable Integer topK;
    private final @Nullable Double topP;
    private final @Nullable List<ToolCallback> toolCallbacks;
    private final @Nullable Map<String, Object> toolContext;
    private final @Nullable String outputSchema;
    private final @Nullable ToolChoice toolChoice;
    private final @Nullable Long seed;
    private final @Nullable Boolean thinking;

    private FsChatOptions(@Nullable String model, @Nullable Double frequencyPenalty, @Nullable Integer maxTokens,
                          @Nullable Double presencePenalty, @Nullable List<String> stopSequences,
                          @Nullable Double temperature, @Nullable Integer topK, @Nullable Double topP,
                          @Nullable List<ToolCallback> toolCallbacks, @Nullable Map<String, Object> toolContext,
                          @Nullable String outputSchema, @Nullable ToolChoice toolChoice, @Nullable Long seed,
                          @Nullable Boolean thinking) {
        this.model = model;
        this.frequencyPenalty = frequencyPenalty;
        this.maxTokens = maxTokens;
        this.presencePenalty = presencePenalty;
        this.stopSequences = stopSequences == null ? null : List.copyOf(stopSequences);
        this.temperature = temperature;
        this.topK = topK;
        this.topP = topP;
        this.toolCallbacks = toolCallbacks == null ? null : List.copyOf(toolCallbacks);
        this.toolContext = toolContext == null ? null : Map.copyOf(toolContext);
        this.outputSchema = outputSchema;
        this.toolChoice = toolChoice;
        this.seed = seed;
        this.thinking = thinking;
    }

    /** A builder with every option unset. */
    public static Builder builder() {
        return new Builder();
    }

    /** The model's name, reported in the responses' metadata; the model itself is the one {@link FsChatModel} runs. */
    @Override
    public @Nullable String getModel() {
        return model;
    }

    @Override
    public @Nullable Double getFrequencyPenalty() {
        return frequencyPenalty;
    }

    @Override
    public @Nullable Integer getMaxTokens() {
        return maxTokens;
    }

    @Override
    public @Nullable Double getPresencePenalty() {
        return presencePenalty;
    }

    @Override
    public @Nullable List<String> getStopSequences() {
        return stopSequences;
    }

    @Override
    public @Nullable Double getTemperature() {
        return temperature;
    }

    @Override
    public @Nullable Integer getTopK() {
        return topK;
    }

    @Override
    public @Nullable Double getTopP() {
        return topP;
    }

    @Override
    public @Nullable List<ToolCallback> getToolCallbacks() {
        return toolCallbacks;
    }

    @Override
    public @Nullable Map<String, Object> getToolContext() {
        return toolContext;
    }

    /** The JSON schema every answer follows (held by grammar); ignored on a turn whose tool choice is REQUIRED. */
    @Override
    public @Nullable String getOutputSchema() {
        return outputSchema;
    }

    /** Whether the model must call the tools (REQUIRED: the answer is calls only), may (AUTO) or must not (NONE). */
    public @Nullable ToolChoice getToolChoice() {
        return toolChoice;
    }

    /** Seeds the random draws, so that the same request answers the same way. */
    public @Nullable Long getSeed() {
        return seed;
    }

    /** Whether Qwen3 thinks before it answers; its reasoning comes back apart from the text. */
    public @Nullable Boolean getThinking() {
        return thinking;
    }

    @Override
    public Builder mutate() {
        return builder().model(model).frequencyPenalty(frequencyPenalty).maxTokens(maxTokens)
                .presencePenalty(presencePenalty).stopSequences(stopSequences).temperature(temperature).topK(topK)
                .topP(topP).toolCallbacks(toolCallbacks).toolContext(toolContext).outputSchema(outputSchema)
                .toolChoice(toolChoice).seed(seed).thinking(thinking);
    }

    /**
     * Builds {@link FsChatOptions}. Spring AI's own fields and their merging ({@link #combineWith}: the other's set
     * values win, tools and stop sequences add up) are its default tool calling builder's.
     */
    public static final class Builder extends DefaultToolCallingChatOptions.Builder<Builder>
            implements StructuredOutputChatOptions.Builder<Builder> {
        private @Nullable String outputSchema;
        private @Nullable ToolChoice toolChoice;
        private @Nullable Long seed;
        private @Nullable Boolean thinking;

        @Override
        public Builder outputSchema(@Nullable String value) {
            this.outputSchema = value;
            return this;
        }

        public Builder toolChoice(@Nullable ToolChoice value) {
            this.toolChoice = value;
            return this;
        }

        public Builder seed(@Nullable Long value) {
            this.seed = value;
            return this;
        }

        public Builder thinking(@Nullable Boolean value) {
            this.thinking = value;
            return this;
        }

        @Override
        public Builder combineWith(ChatOptions.Builder<?> other) {
            super.combineWith(other);
            if (other instanceof Builder that) {
                if (that.outputSchema != null) this.outputSchema = that.outputSchema;
                if (that.toolChoice != null) this.toolChoice = that.toolChoice;
                if (that.seed != null) this.seed = that.seed;
                if (that.thinking != null) this.thinking = that.thinking;
            }
            return this;
        }

        @Override
        public FsChatOptions build() {
            return new FsChatOptions(model, frequencyPenalty, maxTokens, presencePenalty, stopSequences, temperature,
                    topK, topP, toolCallbacks, toolContext, outputSchema, toolChoice, seed, thinking);
        }
    }
}
