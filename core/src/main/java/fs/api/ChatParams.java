package fs.api;

import fs.FsException;
import fs.generate.SamplingParams;
import java.util.List;

/**
 * How a {@link Chat} answers. A null sampling field takes the model's default (its generation_config.json, else Hugging
 * Face's); start from {@link #defaults()} and change what you need with the {@code with…} methods.
 *
 * @param temperature   0 is greedy (always the most likely token); null: the model's default
 * @param topK          keep the k most likely tokens (0: all); null: the model's default
 * @param topP          keep the most likely tokens up to this probability (1: all); null: the model's default
 * @param minP          drop tokens below this fraction of the likeliest one's probability (0: none); null: the model's
 *                      default
 * @param repeatPenalty Hugging Face's repetition penalty (1: none); null: the model's default
 * @param presencePenalty  OpenAI's presence penalty, subtracted once from the logit of each token the answer already
 *                         holds (the prompt does not count); in [-2, 2], 0 or null: none
 * @param frequencyPenalty OpenAI's frequency penalty, subtracted from a token's logit once per time the answer already
 *                         holds it (the prompt does not count); in [-2, 2], 0 or null: none
 * @param seed          seeds the random draws, so that the same chat answers the same way; null: a fresh random seed
 * @param maxTokens     most tokens per answer; -1: until the model ends it or the chat's context is full
 * @param thinking      whether Qwen3 thinks before it answers ({@code enable_thinking}); null: the chat template's
 *                      default (Qwen3: it thinks)
 * @param systemPrompt  the system message at the start of the conversation; null: none
 * @param tools         the functions the model may call (empty: none); their calls come back in
 *                      {@link Reply#toolCalls()}
 * @param toolChoice    whether the model must call them (REQUIRED constrains each answer to calls)
 * @param responseSchema a JSON schema (as JSON text) every answer follows, constrained token by token; null: free
 *                      text. Not with tools that may be called.
 */
public record ChatParams(Float temperature, Integer topK, Float topP, Float minP, Float repeatPenalty,
                         Float presencePenalty, Float frequencyPenalty, Long seed, int maxTokens, Boolean thinking,
                         String systemPrompt, List<Tool> tools, ToolChoice toolChoice, String responseSchema) {

    /** Checks the values: each wrong one is an FsException naming it. */
    public ChatParams {
        SamplingParams.greedy().withOverrides(temperature, topK, topP, minP, repeatPenalty, presencePenalty,
                frequencyPenalty, seed); // throws if wrong
        if (maxTokens < -1) throw new FsException("max tokens must be ≥ 0, or -1 for no limit, got " + maxTokens);
        if (systemPrompt != null && systemPrompt.isEmpty()) systemPrompt = null;
        tools = tools == null ? List.of() : List.copyOf(tools);
        if (toolChoice == null) throw new FsException("the tool choice is required (AUTO when there are no tools)");
        if (responseSchema != null) {
            Tool.holdable(Tool.schema(responseSchema, "the response schema"), "the response schema");
            if (!tools.isEmpty() && toolChoice != ToolChoice.NONE) {
                throw new FsException("a response schema cannot be combined with tools the model may call");
            }
        }
    }

    /**
     * The model's sampling defaults, no token limit, the template's thinking default, no system prompt, no tools, no
     * response schema.
     */
    public static ChatParams defaults() {
        return new ChatParams(null, null, null, null, null, null, null, null, -1, null, null, List.of(),
                ToolChoice.AUTO, null);
    }

    /** These parameters with the temperature changed (0: greedy). */
    public ChatParams withTemperature(float value) {
        return new ChatParams(value, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with top-k changed (0 disables it). */
    public ChatParams withTopK(int value) {
        return new ChatParams(temperature, value, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with top-p changed (1 disables it). */
    public ChatParams withTopP(float value) {
        return new ChatParams(temperature, topK, value, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with min-p changed (0 disables it). */
    public ChatParams withMinP(float value) {
        return new ChatParams(temperature, topK, topP, value, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with the repetition penalty changed (1 disables it). */
    public ChatParams withRepeatPenalty(float value) {
        return new ChatParams(temperature, topK, topP, minP, value, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with OpenAI's presence penalty changed (0 disables it). */
    public ChatParams withPresencePenalty(float value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, value, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with OpenAI's frequency penalty changed (0 disables it). */
    public ChatParams withFrequencyPenalty(float value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, value,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with a fixed seed. */
    public ChatParams withSeed(long value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                value, maxTokens, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with the token limit per answer changed (-1: none). */
    public ChatParams withMaxTokens(int value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, value, thinking, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with thinking turned on or off. */
    public ChatParams withThinking(boolean value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, value, systemPrompt, tools, toolChoice, responseSchema);
    }

    /** These parameters with a system prompt (null or empty: none). */
    public ChatParams withSystemPrompt(String value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, value, tools, toolChoice, responseSchema);
    }

    /** These parameters with the functions the model may call (empty: none). */
    public ChatParams withTools(List<Tool> value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, value, toolChoice, responseSchema);
    }

    /** These parameters with another tool choice. */
    public ChatParams withToolChoice(ToolChoice value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, value, responseSchema);
    }

    /** These parameters with a JSON schema (JSON text) every answer must follow; null: free text. */
    public ChatParams withResponseSchema(String value) {
        return new ChatParams(temperature, topK, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty,
                seed, maxTokens, thinking, systemPrompt, tools, toolChoice, value);
    }

    /** The sampling parameters over the model's defaults. */
    SamplingParams sampling(SamplingParams modelDefaults) {
        return modelDefaults.withOverrides(temperature, topK, topP, minP, repeatPenalty, presencePenalty,
                frequencyPenalty, seed);
    }
}
