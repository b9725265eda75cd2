package fs.generate;

import fs.FsException;
import fs.model.GenerationConfig;
import java.security.SecureRandom;

/**
 * How the next token is chosen from the logits; see {@link Sampler} for the order the steps are applied in.
 *
 * @param temperature   0 means greedy (argmax); otherwise logits are divided by it before the softmax
 * @param topK          keep only the k most likely tokens; 0 disables it
 * @param topP          nucleus: keep the smallest set of most likely tokens whose probability adds up to ≥ topP;
 *                      1 disables it
 * @param minP          drop tokens whose probability is below minP × the largest probability; 0 disables it
 * @param repeatPenalty Hugging Face's repetition penalty over the tokens already seen; 1 disables it
 * @param presencePenalty  OpenAI's presence penalty: subtracted once from the logit of every token already generated
 *                         (not the prompt's); in [-2, 2], 0 disables it
 * @param frequencyPenalty OpenAI's frequency penalty: subtracted from a token's logit once per time it was already
 *                         generated (not counting the prompt); in [-2, 2], 0 disables it
 * @param seed          seeds the random draws, so a run with the same seed and logits picks the same tokens
 */
public record SamplingParams(float temperature, int topK, float topP, float minP, float repeatPenalty,
                             float presencePenalty, float frequencyPenalty, long seed) {
    /** OpenAI's bound on either additive penalty. */
    public static final float MAX_ADDITIVE_PENALTY = 2f;

    public SamplingParams {
        // Negated comparisons so that NaN fails every check.
        if (!(temperature >= 0) || Float.isInfinite(temperature)) {
            throw new FsException("temperature must be a finite number ≥ 0, got " + temperature);
        }
        if (topK < 0) throw new FsException("top-k must be ≥ 0 (0 disables it), got " + topK);
        if (!(topP > 0 && topP <= 1)) throw new FsException("top-p must be in (0, 1] (1 disables it), got " + topP);
        if (!(minP >= 0 && minP <= 1)) throw new FsException("min-p must be in [0, 1] (0 disables it), got " + minP);
        if (!(repeatPenalty > 0) || Float.isInfinite(repeatPenalty)) {
            throw new FsException("repeat penalty must be a finite number > 0 (1 disables it), got " + repeatPenalty);
        }
        checkAdditive("presence penalty", presencePenalty);
        checkAdditive("frequency penalty", frequencyPenalty);
    }

    /** Without OpenAI's additive penalties. */
    public SamplingParams(float temperature, int topK, float topP, float minP, float repeatPenalty, long seed) {
        this(temperature, topK, topP, minP, repeatPenalty, 0f, 0f, seed);
    }

    private static void checkAdditive(String name, float value) {
        if (!(value >= -MAX_ADDITIVE_PENALTY && value <= MAX_ADDITIVE_PENALTY)) {
            throw new FsException(name + " must be a number in [-2, 2] (0 disables it), got " + value);
        }
    }

    /** Always the most likely token: no randomness, no filters, no penalty. */
    public static SamplingParams greedy() {
        return new SamplingParams(0f, 0, 1f, 0f, 1f, 0L);
    }

    /**
     * The sampling parameters a model's generation_config.json describes, with a fresh random seed; greedy when
     * do_sample is false. Apply the user's flags with {@link #withOverrides}.
     */
    public static SamplingParams of(GenerationConfig config) {
        long seed = randomSeed();
        try {
            // Like Hugging Face, greedy decoding still applies the repetition penalty (a logits processor).
            if (!config.doSample()) return new SamplingParams(0f, 0, 1f, 0f, config.repetitionPenalty(), seed);
            return new SamplingParams(config.temperature(), config.topK(), config.topP(), config.minP(),
                    config.repetitionPenalty(), seed);
        } catch (FsException e) {
            throw new FsException(GenerationConfig.FILE_NAME + ": " + e.getMessage(), e);
        }
    }

    /** A seed nobody chose; callers print it so that the run can be repeated with {@code --seed}. */
    public static long randomSeed() {
        return new SecureRandom().nextLong();
    }

    public boolean isGreedy() {
        return temperature == 0f;
    }

    /** Whether any penalty (repetition, presence or frequency) changes the logits. */
    public boolean hasPenalty() {
        return repeatPenalty != 1f || presencePenalty != 0f || frequencyPenalty != 0f;
    }

    /** These parameters with every non-null argument (a flag the user gave) replacing the field of the same name. */
    public SamplingParams withOverrides(
            Float temperature, Integer topK, Float topP, Float minP, Float repeatPenalty, Float presencePenalty,
            Float frequencyPenalty, Long seed) {
        return new SamplingParams(
                temperature != null ? temperature : this.temperature,
                topK != null ? topK : this.topK,
                topP != null ? topP : this.topP,
                minP != null ? minP : this.minP,
                repeatPenalty != null ? repeatPenalty : this.repeatPenalty,
                presencePenalty != null ? presencePenalty : this.presencePenalty,
                frequencyPenalty != null ? frequencyPenalty : this.frequencyPenalty,
                seed != null ? seed : this.seed);
    }
}
