package fs.cli;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.chat.ChatPrompt;
import fs.engine.LoadedModel;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.TextStream;
import fs.grammar.Grammar;
import fs.grammar.GrammarConstraint;
import fs.grammar.TokenVocabulary;
import fs.model.ModelConfig;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Generates text from a prompt: fs run MODEL PROMPT, as ollama run; or with -p TEXT, -f FILE or "
                + "--tokens IDS, as llama-cli. Words alone, where no model is named, are the prompt for the default "
                + "model.", "Examples:", "  fs run Qwen/Qwen3-0.6B \"Why is the sky blue?\"",
                "  fs run -hf Qwen/Qwen3-0.6B-GGUF:Q8_0 -p \"Why is the sky blue?\" -n 64"})
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Mixin
    SamplingOptions samplingOptions;

    @Mixin
    AnswerOptions answerOptions;

    @Mixin
    GrammarOptions grammarOptions;

    @Mixin
    LlamaCliFlags llamaCliFlags = new LlamaCliFlags(LlamaCliFlags.Mode.ONE_PROMPT);

    @Parameters(index = "1", arity = "0..1", paramLabel = "PROMPT",
            description = "The prompt, after MODEL, as for ollama run; the same as -p, - reads it from stdin (one of "
                    + "PROMPT, -p, -f or --tokens is required).")
    String promptArgument;

    @Option(names = {"-p", "--prompt"}, paramLabel = "TEXT",
            description = "The prompt (the user's message); - reads it from stdin (one of PROMPT, -p, -f or --tokens "
                    + "is required).")
    String prompt;

    @Option(names = {"-f", "--file"}, paramLabel = "FILE",
            description = "Reads the prompt from FILE, UTF-8 (one of PROMPT, -p, -f or --tokens is required).")
    Path promptFile;

    @Option(names = "--tokens", paramLabel = "IDS", converter = TokenIds.Converter.class,
            description = "Token ids instead of a prompt, e.g. \"1 2 3\" (as fs tokenize prints them) or 1,2,3; no "
                    + "chat template is applied (one of PROMPT, -p, -f or --tokens is required).")
    TokenIds tokens;

    @Option(names = "--raw", description = "Use the prompt as is, without the chat template (llama-cli's -no-cnv).")
    boolean raw;

    @Option(names = "--print-ids", description = "Print the generated token ids (one line, as fs tokenize does) "
            + "instead of text.")
    boolean printIds;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        settlePrompt();
        if (llamaCliFlags.completion) raw = true; // llama-cli's -no-cnv
        if (answerOptions.system != null && (raw || tokens != null)) {
            throw new ParameterException(spec.commandLine(),
                    "--system goes through the chat template: it cannot be used with --raw or --tokens");
        }
        String text = promptText();
        Grammar grammar = grammarOptions.grammar();
        int maxNewTokens = answerOptions.maxNewTokens;

        // The prompt is tokenized, and checked against the context, once the model's files are open and before its
        // weights are loaded: a prompt that cannot run is refused without that wait.
        AtomicReference<int[]> promptIds = new AtomicReference<>();
        AtomicReference<ModelConfig> config = new AtomicReference<>();
        // Read once, here, for the prompt and for the output: building a tokenizer takes a tenth of a second or more.
        AtomicReference<Tokenizer> tokenizer = new AtomicReference<>();
        boolean needsTokenizer = tokens == null || !printIds || grammar != null;
        try (LoadedModel<SingleSequence> loaded = modelOptions.load(source -> {
                    if (needsTokenizer) tokenizer.set(source.tokenizer());
                    int[] ids = tokens != null ? tokens.ids() : promptIds(source, tokenizer.get(), text);
                    TokenIds.checkInVocabulary(source.config(), ids, tokens != null ? "--tokens" : "the prompt");
                    promptIds.set(ids);
                    config.set(source.config());
                }, context -> {
                    Generator.checkFits(promptIds.get().length, maxNewTokens, context, config.get());
                    return SingleSequence.Shape.forGeneration(context, ModelOptions.PREFILL_BATCH);
                }, err)) {
            int[] ids = promptIds.get();
            SamplingParams params = samplingOptions.resolve(loaded.source().generationConfig());
            Generator generator = new Generator(loaded.state(), loaded.source().stopIds(), params);
            if (!params.isGreedy() && samplingOptions.seed == null) err.println("fs: seed " + params.seed());
            TextStream stream = printIds ? null : new TextStream(tokenizer.get(), answerOptions.hideThink, out);
            GrammarConstraint constraint = grammar == null ? null
                    : new GrammarConstraint(grammar, TokenVocabulary.of(tokenizer.get()), loaded.source().stopIds());
            try (CtrlC ctrlC = new CtrlC()) {
                Generator.Generation generation = generator.generate(ids, maxNewTokens,
                        ModelFileChangedException.watching(loaded.source(), stream != null ? stream : id -> {}), ctrlC,
                        constraint);
                ModelFileChangedException.checkUnchanged(loaded.source()); // the last forward, which may have chosen to stop, read the weights too
                if (stream != null) {
                    stream.finish();
                    out.println();
                } else {
                    out.println(TokenIds.spaced(generation.ids()));
                }
                out.flush();
                if (generation.stopReason() == StopReason.CONTEXT_FULL) {
                    err.println("fs: stopped: the context of " + loaded.state().shape().contextLength()
                            + " tokens is full (raise --ctx)");
                } else if (generation.stopReason() == StopReason.CANCELLED) {
                    err.println("fs: stopped: interrupted (Ctrl-C)");
                }
                err.println(generation.stats().summary());
                return generation.stopReason() == StopReason.CANCELLED ? CtrlC.EXIT : 0;
            }
        }
    }

    /**
     * Takes the one prompt given (PROMPT as -p), refusing none or two before the model is looked for. With no other
     * prompt, the one argument is the prompt when -m or -hf names the model ({@code fs run -m MODEL PROMPT}) or when it
     * cannot be a model ({@code fs run "Why is the sky blue?"}, for the default model).
     */
    private void settlePrompt() {
        if (promptArgument == null && prompt == null && promptFile == null && tokens == null) {
            promptArgument = modelOptions.argumentThatIsThePrompt();
        }
        List<String> given = new ArrayList<>();
        if (promptArgument != null) given.add("PROMPT");
        if (prompt != null) given.add("-p");
        if (promptFile != null) given.add("-f");
        if (tokens != null) given.add("--tokens");
        if (given.isEmpty()) {
            throw new ParameterException(spec.commandLine(),
                    "no prompt: give it after the model (fs run MODEL PROMPT), or as -p TEXT, -f FILE or --tokens IDS");
        }
        if (given.size() > 1) {
            String named = String.join(", ", given.subList(0, given.size() - 1)) + " and " + given.getLast();
            throw new ParameterException(spec.commandLine(), named + " are exclusive: give the prompt one way");
        }
        if (promptArgument != null) prompt = promptArgument;
    }

    /** The prompt from -p, stdin (-p -) or -f, read before the model loads; null for --tokens. */
    private String promptText() throws IOException {
        if (promptFile != null) {
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(promptFile);
            } catch (NoSuchFileException e) {
                throw new FsException("-f " + promptFile + ": no such file");
            } catch (IOException e) {
                throw new FsException("-f " + promptFile + ": cannot read: " + e.getMessage(), e);
            }
            return withoutFinalNewline(TokenizeCommand.readUtf8(bytes, promptFile.toString()));
        }
        if ("-".equals(prompt)) return withoutFinalNewline(TokenizeCommand.readUtf8(System.in.readAllBytes(), "stdin"));
        return prompt;
    }

    /** A file or a pipe ends with a newline that the user did not mean as part of the message (llama-cli drops it). */
    private static String withoutFinalNewline(String text) {
        if (text.endsWith("\r\n")) return text.substring(0, text.length() - 2);
        return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    }

    /** The prompt's ids: the text as it is with --raw, else one user turn (after the system prompt) for the answer. */
    private int[] promptIds(ModelSource source, Tokenizer tokenizer, String text) {
        if (raw) return tokenizer.encode(text);
        return new ChatPrompt(source.chatTemplate(), tokenizer).nextTurn(answerOptions.system,
                List.of(new ChatMessage("user", text)), List.of(), answerOptions.enableThinking());
    }
}
