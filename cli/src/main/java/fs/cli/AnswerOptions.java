package fs.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** What run and chat share about an answer: its length, the system message, and the model's thinking. */
final class AnswerOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    int maxNewTokens = -1;

    @Option(names = {"--system", "-sys", "--system-prompt"}, paramLabel = "TEXT",
            description = "A system message before the first user message (default: none).")
    String system;

    @Option(names = "--no-think", description = "Ask the model not to think (enable_thinking=false in the template).")
    boolean noThink;

    @Option(names = "--hide-think", description = "Leave the <think>…</think> block out of the printed answer.")
    boolean hideThink;

    @Option(names = {"-n", "--n-predict"}, paramLabel = "N",
            description = "Tokens per answer at most; -1 (the default): until the end of the answer or the context.")
    void maxNewTokens(int n) {
        if (n < -1) throw new ParameterException(command.commandLine(), "-n must be ≥ 0, or -1 for no limit; got " + n);
        maxNewTokens = n;
    }

    /** The template's enable_thinking: false with --no-think, else left to the template. */
    Boolean enableThinking() {
        return noThink ? Boolean.FALSE : null;
    }
}
