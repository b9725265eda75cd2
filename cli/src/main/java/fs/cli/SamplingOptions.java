package fs.cli;

import fs.FsException;
import fs.generate.SamplingParams;
import fs.model.GenerationConfig;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Sampling flags; each one the user leaves out takes the model's generation_config.json default (Hugging Face's when
 * the file has none). A value no sampler accepts is a usage error while the command line is parsed, before any model
 * is loaded.
 */
final class SamplingOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    Float temperature;
    Integer topK;
    Float topP;
    Float minP;
    Float repeatPenalty;
    Float presencePenalty;
    Float frequencyPenalty;

    @Option(names = {"-s", "--seed"}, paramLabel = "S", description = "Random seed (default: a random one, printed).")
    Long seed;

    @Option(names = "--temp", paramLabel = "T",
            description = "Temperature; 0 is greedy (default: the model's generation_config.json, else 1).")
    void temperature(float value) {
        temperature = value;
        check("--temp");
    }

    @Option(names = "--top-k", paramLabel = "K",
            description = "Keep the K most likely tokens; 0 disables (default: the model's, else 50).")
    void topK(int value) {
        topK = value;
        check("--top-k");
    }

    @Option(names = "--top-p", paramLabel = "P",
            description = "Nucleus sampling threshold; 1 disables (default: the model's, else 1).")
    void topP(float value) {
        topP = value;
        check("--top-p");
    }

    @Option(names = "--min-p", paramLabel = "P",
            description = "Drop tokens below P × the top probability; 0 disables (default: the model's, else 0).")
    void minP(float value) {
        minP = value;
        check("--min-p");
    }

    @Option(names = "--repeat-penalty", paramLabel = "R",
            description = "Repetition penalty; 1 disables (default: the model's, else 1).")
    void repeatPenalty(float value) {
        repeatPenalty = value;
        check("--repeat-penalty");
    }

    @Option(names = "--presence-penalty", paramLabel = "P",
            description = "Subtract P from the logit of every token already generated (OpenAI's; the prompt does not "
                    + "count); in [-2, 2], 0 disables (default: 0).")
    void presencePenalty(float value) {
        presencePenalty = value;
        check("--presence-penalty");
    }

    @Option(names = "--frequency-penalty", paramLabel = "F",
            description = "Subtract F from a token's logit per time it was already generated (OpenAI's; the prompt "
                    + "does not count); in [-2, 2], 0 disables (default: 0).")
    void frequencyPenalty(float value) {
        frequencyPenalty = value;
        check("--frequency-penalty");
    }

    /** The model's defaults with the user's flags applied. */
    SamplingParams resolve(GenerationConfig defaults) {
        return SamplingParams.of(defaults).withOverrides(temperature, topK, topP, minP, repeatPenalty, presencePenalty,
                frequencyPenalty, seed);
    }

    /** Refuses the flag just set when the sampler would: every field is checked on its own, whatever the others. */
    private void check(String flag) {
        try {
            SamplingParams.greedy().withOverrides(temperature, topK, topP, minP, repeatPenalty, presencePenalty,
                frequencyPenalty, seed);
        } catch (FsException e) {
            throw new ParameterException(command.commandLine(), "invalid value for " + flag + ": " + e.getMessage());
        }
    }
}
