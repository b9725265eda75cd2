package fs.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * llama-cli's flags for how it talks with the user, which someone coming from it types out of habit, for fs run (one
 * prompt, llama-cli's -no-cnv or -st) and fs chat (a conversation, llama-cli's -cnv): those that ask for what the
 * command does anyway are taken; the others say in one line what it does instead, rather than being read as something
 * else or refused as unknown. Hidden from --help: they are not fs's own.
 */
final class LlamaCliFlags {
    /** What the command is to llama-cli: the same flag asks for what one does and the other does not. */
    enum Mode { ONE_PROMPT, CONVERSATION }

    private final Mode mode;

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    /** llama-cli's completion mode (-no-cnv): the prompt continued as it is, which is fs run's --raw. */
    boolean completion;

    LlamaCliFlags(Mode mode) {
        this.mode = mode;
    }

    // The flags a command takes are arrays: llama-cli takes them twice or under two names (-cnv -i), a boolean once.

    /**
     * The Jinja chat template and no warm-up run before the first answer: what both commands do (fs chat warms up while
     * the first message is typed, which delays nothing).
     */
    @Option(names = {"--jinja", "--no-warmup"}, hidden = true)
    boolean[] whatFsDoes;

    @Option(names = {"-st", "--single-turn"}, hidden = true)
    void singleTurn(boolean[] each) {
        if (mode == Mode.CONVERSATION) {
            throw llamaCliOnly("-st/--single-turn", "one prompt and its answer is 'fs run MODEL PROMPT'; fs chat goes "
                    + "on until /exit or Ctrl-D");
        }
    }

    @Option(names = {"-cnv", "--conversation", "-i", "--interactive", "-if", "--interactive-first"}, hidden = true)
    void conversation(boolean[] each) {
        if (mode == Mode.ONE_PROMPT) {
            throw llamaCliOnly("-cnv/-i", "a conversation is 'fs chat MODEL'; fs run answers one prompt and exits");
        }
    }

    @Option(names = {"-no-cnv", "--no-conversation"}, hidden = true)
    void noConversation(boolean on) {
        if (mode == Mode.CONVERSATION) {
            throw llamaCliOnly("-no-cnv", "fs chat is a conversation; for one prompt use 'fs run MODEL PROMPT' (add "
                    + "--raw for no chat template)");
        }
        completion = true;
    }

    @Option(names = {"-r", "--reverse-prompt"}, paramLabel = "TEXT", hidden = true)
    void reversePrompt(String text) {
        throw llamaCliOnly("-r/--reverse-prompt", switch (mode) {
            case ONE_PROMPT -> "fs run stops at the model's end of turn or at -n; stop strings are fs serve's "
                    + "(\"stop\")";
            case CONVERSATION -> "fs chat ends each answer at the model's end of turn or at -n, then waits for your "
                    + "next message";
        });
    }

    @Option(names = {"-e", "--escape", "--no-escape"}, hidden = true)
    void escape(boolean on) {
        throw llamaCliOnly("-e/--escape", switch (mode) {
            case ONE_PROMPT -> "fs takes the prompt as it is, a \\n stays a backslash and an n; write a newline itself "
                    + "(bash: $'one\\ntwo') or use -f FILE";
            case CONVERSATION -> "fs chat takes a message as it is typed, a \\n stays a backslash and an n; write a "
                    + "message of several lines between \"\"\" lines";
        });
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
