package fs.cli;

import fs.generate.GenerationConfig;
import fs.generate.SamplingParams;
import picocli.CommandLine.Option;

/** Sampling flags; each one the user leaves out takes the model's generation_config.json default. */
final class SamplingOptions {
    @Option(names = "--temp", paramLabel = "T", description = "Temperature; 0 is greedy (default: the model's).")
    Float temperature;

    @Option(names = "--top-k", paramLabel = "K", description = "Keep the K most likely tokens; 0 disables.")
    Integer topK;

    @Option(names = "--top-p", paramLabel = "P", description = "Nucleus sampling threshold; 1 disables.")
    Float topP;

    @Option(names = "--min-p", paramLabel = "P", description = "Drop tokens below P × the top probability; 0 disables.")
    Float minP;

    @Option(names = "--repeat-penalty", paramLabel = "R", description = "Repetition penalty; 1 disables.")
    Float repeatPenalty;

    @Option(names = "--seed", paramLabel = "S", description = "Random seed (default: a random one, printed).")
    Long seed;

    /** The model's defaults with the user's flags applied. */
    SamplingParams resolve(GenerationConfig defaults) {
        return defaults.samplingParams().withOverrides(temperature, topK, topP, minP, repeatPenalty, seed);
    }
}
