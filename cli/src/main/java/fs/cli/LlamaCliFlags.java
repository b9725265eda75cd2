package fs.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * llama-cli's flags for how it talks with the user, which someone coming from it types out of habit: those that ask for
 * what fs run does anyway are taken; the others say in one line what fs does instead, rather than being read as
 * something else or refused as unknown. Hidden from --help: they are not fs's own.
 */
final class LlamaCliFlags {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    /** One turn through the model's Jinja chat template, with no warm-up run before it: what fs run does. */
    @Option(names = {"-st", "--single-turn", "--jinja", "--no-warmup"}, hidden = true)
    boolean[] whatFsRunDoes;

    @Option(names = {"-cnv", "--conversation", "-i", "--interactive", "-if", "--interactive-first"}, hidden = true)
    void conversation(boolean on) {
        throw llamaCliOnly("-cnv/-i", "a conversation is 'fs chat MODEL'; fs run answers one prompt and exits");
    }

    @Option(names = {"-r", "--reverse-prompt"}, paramLabel = "TEXT", hidden = true)
    void reversePrompt(String text) {
        throw llamaCliOnly("-r/--reverse-prompt", "fs run stops at the model's end of turn or at -n; stop strings "
                + "are fs serve's (\"stop\")");
    }

    @Option(names = {"-e", "--escape", "--no-escape"}, hidden = true)
    void escape(boolean on) {
        throw llamaCliOnly("-e/--escape", "fs takes the prompt as it is, a \\n stays a backslash and an n; write a "
                + "newline itself (bash: $'one\\ntwo') or use -f FILE");
    }

    @Option(names = {"-co", "--color"}, arity = "0..1", paramLabel = "on|off|auto", hidden = true)
    void color(String when) {
        throw llamaCliOnly("--color", "fs prints the answer as plain text");
    }

    @Option(names = "--reasoning-budget", paramLabel = "N", hidden = true)
    void reasoningBudget(String tokens) {
        throw llamaCliOnly("--reasoning-budget", "--no-think asks the model not to think; there is no budget between");
    }

    private ParameterException llamaCliOnly(String flag, String instead) {
        return new ParameterException(command.commandLine(), flag + " is llama-cli's: " + instead);
    }
}
