package fs.cli;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.TextStream;
import fs.model.Qwen3Model;
import fs.tokenizer.Tokenizer;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "run", mixinStandardHelpOptions = true, description = "Generates text from a prompt.")
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Mixin
    SamplingOptions samplingOptions;

    @Option(names = {"-p", "--prompt"}, paramLabel = "TEXT", description = "The prompt (the user's message).")
    String prompt;

    @Option(names = "--tokens", paramLabel = "IDS", split = ",",
            description = "Token ids instead of a prompt, e.g. 1,2,3; no chat template is applied.")
    int[] tokens;

    @Option(names = "-n", paramLabel = "N", defaultValue = "-1",
            description = "Tokens to generate at most; -1: until the end of the sequence or the context.")
    int maxNewTokens;

    @Option(names = "--system", paramLabel = "TEXT", description = "A system message before the prompt.")
    String system;

    @Option(names = "--raw", description = "Use the prompt as is, without the chat template.")
    boolean raw;

    @Option(names = "--no-think", description = "Ask the model not to think (enable_thinking=false in the template).")
    boolean noThink;

    @Option(names = "--hide-think", description = "Leave the <think>…</think> block out of the printed answer.")
    boolean hideThink;

    @Option(names = "--print-ids", description = "Print the generated token ids (one line) instead of text.")
    boolean printIds;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if ((prompt == null) == (tokens == null)) throw new FsException("give either -p PROMPT or --tokens IDS");
        if (maxNewTokens < -1) throw new FsException("-n must be ≥ 0, or -1 for no limit; got " + maxNewTokens);
        if (system != null && (raw || tokens != null)) {
            throw new FsException("--system goes through the chat template: it cannot be used with --raw or --tokens");
        }

        try (LoadedModel loaded = modelOptions.load(
                context -> Qwen3Model.Shape.forGeneration(context, ModelOptions.PREFILL_BATCH), err)) {
            Tokenizer tokenizer = printIds && tokens != null ? null : Tokenizer.load(loaded.directory());
            int[] ids = tokens != null ? tokens : tokenizer.encode(promptText(loaded));
            loaded.checkTokenIds(ids, tokens != null ? "--tokens" : "the prompt");
            SamplingParams params = samplingOptions.resolve(loaded.generationConfig());
            Generator generator = new Generator(loaded.model(), loaded.stopIds(), params);
            generator.checkFits(ids.length, maxNewTokens);
            if (!params.isGreedy() && samplingOptions.seed == null) err.println("fs: seed " + params.seed());
            TextStream text = printIds ? null : new TextStream(tokenizer, hideThink, out);
            Generator.Generation generation = generator.generate(ids, maxNewTokens, text != null ? text : id -> {});
            if (text != null) {
                text.finish();
                out.println();
            } else {
                out.println(Arrays.stream(generation.ids()).mapToObj(Integer::toString).collect(Collectors.joining(" ")));
            }
            out.flush();
            if (generation.stopReason() == StopReason.CONTEXT_FULL) {
                err.println("fs: stopped: the context of " + loaded.model().shape().contextLength()
                        + " tokens is full (raise --ctx)");
            }
            err.println(generation.stats().summary());
        }
        return 0;
    }

    private String promptText(LoadedModel loaded) {
        if (raw) return prompt;
        List<ChatMessage> messages = new ArrayList<>();
        if (system != null) messages.add(new ChatMessage("system", system));
        messages.add(new ChatMessage("user", prompt));
        return ChatTemplate.load(loaded.directory()).render(messages, true, noThink ? Boolean.FALSE : null);
    }
}
