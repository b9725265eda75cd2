package fs.cli;

import fs.FsException;
import fs.engine.LoadedModel;
import fs.generate.Conversation;
import fs.generate.GenerationStats;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.generate.StopReason;
import fs.generate.TextStream;
import fs.model.SingleSequence;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "chat", mixinStandardHelpOptions = true,
        description = "Chats with the model, one message per line on stdin (several between \"\"\" lines):"
                + " /help lists the commands, /reset starts over, /exit or Ctrl-D quits; Ctrl-C stops an answer.")
final class ChatCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ModelOptions modelOptions;

    @Mixin
    SamplingOptions samplingOptions;

    @Mixin
    AnswerOptions answerOptions;

    @Mixin
    LlamaCliFlags llamaCliFlags = new LlamaCliFlags(LlamaCliFlags.Mode.CONVERSATION);

    /** The generations so far (a turn dropped for an error is none) and their statistics together. */
    private int answers;
    private GenerationStats total;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();

        try (LoadedModel<SingleSequence> loaded = modelOptions.load(
                context -> SingleSequence.Shape.forGeneration(context, ModelOptions.PREFILL_BATCH), err)) {
            Tokenizer tokenizer = loaded.source().tokenizer();
            SamplingParams params = samplingOptions.resolve(loaded.source().generationConfig());
            if (!params.isGreedy() && samplingOptions.seed == null) err.println("fs: seed " + params.seed());
            Generator generator = new Generator(loaded.state(), loaded.source().stopIds(), params);
            Conversation conversation = new Conversation(generator, tokenizer, loaded.source().chatTemplate(),
                    answerOptions.system, answerOptions.enableThinking(), answerOptions.maxNewTokens);

            try (ChatInput input = ChatInput.open(err)) {
                err.println("fs: chat: one message per line, or several between \"\"\" lines; /help lists the commands,"
                        + " /exit or Ctrl-D quits");
                converse(loaded, conversation, tokenizer, input, out, err);
            }
            // As llama-cli prints its timings once, at exit: after each answer they would come between the answer
            // and the next prompt, where the user reads.
            if (answers > 0) {
                err.println("fs: " + answers + (answers == 1 ? " answer" : " answers") + " in all:");
                err.println(total.summary());
            }
        }
        return 0;
    }

    private void converse(LoadedModel<SingleSequence> loaded, Conversation conversation, Tokenizer tokenizer, ChatInput input,
            PrintWriter out, PrintWriter err) throws IOException {
        ChatReader reader = new ChatReader(input, err);
        // While the user types the first message (and only then: piped input is already there), the model warms
        // up, as llama.cpp's does at load.
        BackgroundWarmUp warmUp = input.hasTypedAhead() ? null : BackgroundWarmUp.start(conversation);
        try {
            while (true) {
                ChatEntry entry = reader.next();
                if (warmUp != null) {
                    if (entry == ChatEntry.Command.EXIT) warmUp.stop();
                    else warmUp.await();
                    warmUp = null;
                }
                switch (entry) {
                    case ChatEntry.Command.EXIT -> {
                        return;
                    }
                    case ChatEntry.Command.HELP -> printHelp(err);
                    case ChatEntry.Command.RESET -> {
                        conversation.reset();
                        err.println("fs: the conversation starts over");
                    }
                    case ChatEntry.UnknownCommand unknown -> err.println("fs: " + unknown.word()
                            + " is not a command (/help lists them); to send a message that starts with /, put it"
                            + " between \"\"\" and \"\"\"");
                    case ChatEntry.Message message -> answer(loaded, conversation, tokenizer, message.text(), input, out, err);
                }
            }
        } finally {
            if (warmUp != null) warmUp.stop(); // the model is closed next: the warm-up must be over
        }
    }

    private void answer(LoadedModel<SingleSequence> loaded, Conversation conversation, Tokenizer tokenizer, String text,
            ChatInput input, PrintWriter out, PrintWriter err) {
        TextStream answer = new TextStream(tokenizer, answerOptions.hideThink, out);
        Generator.Generation generation;
        try {
            generation = conversation.reply(text, ModelFileChangedException.watching(loaded.source(), answer), input.stopOnCtrlC());
        } catch (FsException e) {
            err.println("fs: " + e.getMessage()); // the turn is dropped; the conversation goes on
            return;
        }
        answer.finish();
        out.println();
        out.flush();
        switch (generation.stopReason()) {
            case CONTEXT_FULL ->
                err.println("fs: the answer stopped: the context is full (/reset starts a new conversation)");
            case CANCELLED -> err.println(generation.ids().length > 0
                    ? "fs: the answer stopped at Ctrl-C; what it said so far stays in the conversation"
                    : "fs: stopped at Ctrl-C before the answer began; the message was dropped");
            default -> {}
        }
        answers++;
        total = total == null ? generation.stats() : total.plus(generation.stats());
    }

    private static void printHelp(PrintWriter err) {
        for (ChatEntry.Command command : ChatEntry.Command.values()) {
            err.printf("  %-16s %s%n", String.join(", ", command.names()), command.description());
        }
        err.printf("  %-16s %s%n", "\"\"\"", "starts a message of several lines, up to a line that ends with \"\"\"");
        err.printf("  %-16s %s%n", "Ctrl-C", "stops the answer being generated; at the prompt, drops the line typed");
    }
}
