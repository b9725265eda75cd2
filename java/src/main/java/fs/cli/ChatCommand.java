package fs.cli;

import fs.FsException;
import fs.chat.ChatTemplate;
import fs.generate.Conversation;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.TextStream;
import fs.model.Qwen3Model;
import fs.tokenizer.Tokenizer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "chat", mixinStandardHelpOptions = true,
        description = "Chats with the model, one message per line on stdin: /reset starts over, /exit or Ctrl-D quits.")
final class ChatCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Mixin
    SamplingOptions samplingOptions;

    @Mixin
    AnswerOptions answerOptions;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();

        try (LoadedModel loaded = modelOptions.load(
                context -> Qwen3Model.Shape.forGeneration(context, ModelOptions.PREFILL_BATCH), err)) {
            Tokenizer tokenizer = Tokenizer.load(loaded.directory());
            SamplingParams params = samplingOptions.resolve(loaded.generationConfig());
            if (!params.isGreedy() && samplingOptions.seed == null) err.println("fs: seed " + params.seed());
            Generator generator = new Generator(loaded.model(), loaded.stopIds(), params);
            Conversation conversation = new Conversation(generator, tokenizer, ChatTemplate.load(loaded.directory()),
                    answerOptions.system, answerOptions.enableThinking(), answerOptions.maxNewTokens);

            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            err.println("fs: chat: one message per line; /reset starts over, /exit or Ctrl-D quits");
            boolean first = true;
            while (true) {
                err.print("> ");
                err.flush();
                // While the user types the first message (and only then: piped input is already there), the model
                // warms up, as llama.cpp's does at load; what the user typed meanwhile waits in the terminal.
                if (first && !in.ready()) conversation.warmUp(() -> false);
                first = false;
                String line = in.readLine();
                if (line == null || line.strip().equals("/exit")) break;
                if (line.isBlank()) continue;
                if (line.strip().equals("/reset")) {
                    conversation.reset();
                    err.println("fs: the conversation starts over");
                    continue;
                }
                TextStream answer = new TextStream(tokenizer, answerOptions.hideThink, out);
                Generator.Generation generation;
                try {
                    generation = conversation.reply(line, loaded.watching(answer), () -> false);
                } catch (FsException e) {
                    err.println("fs: " + e.getMessage()); // the turn is dropped; the conversation goes on
                    continue;
                }
                answer.finish();
                out.println();
                out.flush();
                if (generation.stopReason() == StopReason.CONTEXT_FULL) {
                    err.println("fs: the answer stopped: the context is full (/reset starts a new conversation)");
                }
                err.println(generation.stats().summary());
            }
        }
        return 0;
    }
}
