package fs.cli;

import fs.FsException;
import fs.chat.ChatMessage;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.TextStream;
import fs.model.SingleSequence;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
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

    @Mixin
    AnswerOptions answerOptions;

    @Option(names = {"-p", "--prompt"}, paramLabel = "TEXT", description = "The prompt (the user's message); - reads it from stdin (required: -p, -f or --tokens).")
    String prompt;

    @Option(names = {"-f", "--file"}, paramLabel = "FILE", description = "Reads the prompt from FILE, UTF-8 (required: -p, -f or --tokens).")
    Path promptFile;

    @Option(names = "--tokens", paramLabel = "IDS", split = ",",
            description = "Token ids instead of a prompt, e.g. 1,2,3; no chat template is applied (required: -p, -f or --tokens).")
    int[] tokens;

    @Option(names = "--raw", description = "Use the prompt as is, without the chat template.")
    boolean raw;

    @Option(names = "--print-ids", description = "Print the generated token ids (one line) instead of text.")
    boolean printIds;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int inputs = (prompt != null ? 1 : 0) + (promptFile != null ? 1 : 0) + (tokens != null ? 1 : 0);
        if (inputs != 1) throw new FsException("give one of -p PROMPT, -f FILE or --tokens IDS");
        if (answerOptions.system != null && (raw || tokens != null)) {
            throw new FsException("--system goes through the chat template: it cannot be used with --raw or --tokens");
        }
        String text = promptText();
        int maxNewTokens = answerOptions.maxNewTokens;

        try (LoadedModel loaded = modelOptions.load(
                context -> SingleSequence.Shape.forGeneration(context, ModelOptions.PREFILL_BATCH), err)) {
            Tokenizer tokenizer = printIds && tokens != null ? null : loaded.source().tokenizer();
            int[] ids = tokens != null ? tokens : tokenizer.encode(templated(loaded, text));
            loaded.checkTokenIds(ids, tokens != null ? "--tokens" : "the prompt");
            SamplingParams params = samplingOptions.resolve(loaded.generationConfig());
            Generator generator = new Generator(loaded.sequence(), loaded.stopIds(), params);
            generator.checkFits(ids.length, maxNewTokens);
            if (!params.isGreedy() && samplingOptions.seed == null) err.println("fs: seed " + params.seed());
            TextStream stream = printIds ? null : new TextStream(tokenizer, answerOptions.hideThink, out);
            Generator.Generation generation =
                    generator.generate(ids, maxNewTokens, loaded.watching(stream != null ? stream : id -> {}));
            loaded.checkUnchanged(); // the last forward, which may have chosen to stop, read the weights too
            if (stream != null) {
                stream.finish();
                out.println();
            } else {
                out.println(Arrays.stream(generation.ids()).mapToObj(Integer::toString).collect(Collectors.joining(" ")));
            }
            out.flush();
            if (generation.stopReason() == StopReason.CONTEXT_FULL) {
                err.println("fs: stopped: the context of " + loaded.sequence().shape().contextLength()
                        + " tokens is full (raise --ctx)");
            }
            err.println(generation.stats().summary());
        }
        return 0;
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

    private String templated(LoadedModel loaded, String text) {
        if (raw) return text;
        List<ChatMessage> messages = new ArrayList<>();
        if (answerOptions.system != null) messages.add(new ChatMessage("system", answerOptions.system));
        messages.add(new ChatMessage("user", text));
        return loaded.source().chatTemplate().render(messages, true, answerOptions.enableThinking());
    }
}
