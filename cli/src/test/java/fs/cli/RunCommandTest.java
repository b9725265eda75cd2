package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.cpu.VectorBackend;
import fs.chat.ChatMessage;
import fs.chat.ChatTemplate;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.model.Golden;
import fs.model.TestModel;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

class RunCommandTest {
    static final List<String> CHECKPOINTS = Golden.CHECKPOINTS;

    private static String spaced(int[] ids) {
        return Arrays.stream(ids).mapToObj(Integer::toString).collect(Collectors.joining(" "));
    }

    @ParameterizedTest
    @FieldSource("CHECKPOINTS")
    void greedyIdsFromTokensMatchTheReference(String checkpoint) throws IOException {
        Golden golden = Golden.load(checkpoint);
        CliRun run = CliRun.of("run", golden.modelDir().toString(), "--tokens", CliRun.ids(golden.greedyPromptIds()),
                "-n", "16", "--temp", "0", "--print-ids", "-t", "2");
        assertEquals(0, run.exitCode(), run.err());
        assertEquals(spaced(golden.greedyGeneratedIds()), run.out().strip());
    }

    @Test
    void thePresenceAndFrequencyPenaltyFlagsReachTheSampler() throws IOException {
        // tiny-tied's answers repeat tokens, which is what the penalties act on; a high temperature, because these
        // models' top logits are too far apart for a penalty ≤ 2 to move a greedy choice.
        Path model = Golden.modelDir("tiny-tied");
        int[] prompt = Tokenizer.load(model).encode(ChatTemplate.load(model)
                .render(List.of(new ChatMessage("user", "Why is the sky blue?")), true, null));
        int maxTokens = 16;
        List<String> common = List.of("run", model.toString(), "--tokens", CliRun.ids(prompt), "-n",
                Integer.toString(maxTokens), "--temp", "40", "--seed", "99", "--print-ids", "-t", "2");
        List<String> penalised = new ArrayList<>(common);
        penalised.addAll(List.of("--presence-penalty", "1.5", "--frequency-penalty", "2"));
        CliRun run = CliRun.of(penalised.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run.err());
        CliRun plain = CliRun.of(common.toArray(String[]::new));
        assertEquals(0, plain.exitCode(), plain.err());

        // The reference: the Generator with generation_config.json's top-k 20 and top-p 0.95 and the flags' values.
        int[] stopIds;
        try (ModelSource source = ModelSource.open(model)) {
            stopIds = source.stopIds();
        }
        int[] expected;
        try (TestModel test = TestModel.open(model, new VectorBackend(2), 128, 64, 1)) {
            SamplingParams params = new SamplingParams(40f, 20, 0.95f, 0f, 1f, 1.5f, 2f, 99L);
            expected = new Generator(test.sequence(), stopIds, params).generate(prompt, maxTokens, id -> {}).ids();
        }
        assertEquals(spaced(expected), run.out().strip());
        assertTrue(!plain.out().equals(run.out()), "the penalties changed the draws: " + run.out());
    }

    @Test
    void aPromptGoesThroughTheChatTemplate() throws IOException {
        // The reference's greedy prompt is the template's rendering of one user message "Hello".
        Golden golden = Golden.load("tiny-untied");
        String model = golden.modelDir().toString();
        CliRun ids = CliRun.of("run", model, "-p", "Hello", "-n", "16", "--temp", "0", "--print-ids", "-t", "2");
        assertEquals(0, ids.exitCode(), ids.err());
        assertEquals(spaced(golden.greedyGeneratedIds()), ids.out().strip());

        CliRun text = CliRun.of("run", model, "-p", "Hello", "-n", "16", "--temp", "0", "-t", "2");
        assertEquals(0, text.exitCode(), text.err());
        String expected = Tokenizer.load(golden.modelDir()).decode(golden.greedyGeneratedIds(), false);
        assertEquals(expected + System.lineSeparator(), text.out());
        assertTrue(text.err().contains("prompt:") && text.err().contains("generation:"), text.err());
    }

    @Test
    void thePromptAfterTheModelIsTheSameAsP() throws IOException {
        Golden golden = Golden.load("tiny-untied"); // its greedy prompt is the template's rendering of "Hello"
        String model = golden.modelDir().toString();
        List<String> flags = List.of("-n", "16", "--temp", "0", "--print-ids", "-t", "2");
        for (List<String> named : List.of(List.of(model, "Hello"), List.of("-m", model, "Hello"),
                List.of("Hello", "-hf", model))) {
            List<String> args = new ArrayList<>(List.of("run"));
            args.addAll(named);
            args.addAll(flags);
            CliRun run = CliRun.of(args.toArray(String[]::new));
            assertEquals(0, run.exitCode(), run.err());
            assertEquals(spaced(golden.greedyGeneratedIds()), run.out().strip(), String.join(" ", named));
        }
        CliRun both = CliRun.of("run", model, "Hello", "-p", "Hello");
        assertEquals(2, both.exitCode());
        assertEquals("fs: PROMPT and -p are exclusive: give the prompt one way (see 'fs run --help')",
                both.err().strip());
        CliRun third = CliRun.of("run", model, "Why is", "the sky blue?");
        assertEquals(2, third.exitCode());
        assertEquals("fs: unexpected argument 'the sky blue?' (see 'fs run --help')", third.err().strip());
    }

    /** What --print-ids prints, fs detokenize reads back: the text fs run prints. */
    @Test
    void printedIdsDetokenizeToThePrintedText() {
        String model = Golden.modelDir("tiny-tied").toString();
        List<String> args = List.of("run", model, "-p", "Why is the sky blue?", "-n", "12", "--temp", "0", "-t", "2");
        CliRun text = CliRun.of(args.toArray(String[]::new));
        assertEquals(0, text.exitCode(), text.err());
        List<String> printingIds = new ArrayList<>(args);
        printingIds.add("--print-ids");
        CliRun ids = CliRun.of(printingIds.toArray(String[]::new));
        assertEquals(0, ids.exitCode(), ids.err());
        assertTrue(ids.out().strip().matches("\\d+( \\d+)*"), ids.out());

        CliRun decoded = CliRun.of("detokenize", model, ids.out().strip());
        assertEquals(0, decoded.exitCode(), decoded.err());
        assertEquals(text.out(), decoded.out());
    }

    /** Refused once the tokenizer and the config are read, before the weights load (whose line would come first). */
    @Test
    void aPromptLongerThanTheContextIsRefusedBeforeTheWeightsLoad() {
        String model = Golden.modelDir("tiny-tied").toString();
        CliRun run = CliRun.of("run", model, "-p", "word ".repeat(40), "--ctx", "16", "-t", "2", "--temp", "0");
        assertEquals(1, run.exitCode(), run.err());
        assertEquals("", run.out());
        assertEquals(1, run.err().lines().count(), "no load line before the refusal: " + run.err());
        assertTrue(run.err().matches("fs: \\d+ prompt tokens \\+ -?\\d+ new tokens \\(-n\\) do not fit the context of 16 "
                + "tokens; raise --ctx .*\\R|fs: \\d+ prompt tokens do not fit the context of 16 tokens; raise --ctx .*\\R"),
                run.err());
    }

    @Test
    void aPromptThatCannotFitTheContextIsOneErrorLine() throws IOException {
        Golden golden = Golden.load("tiny-tied");
        CliRun run = CliRun.of("run", golden.modelDir().toString(), "--tokens", CliRun.ids(golden.greedyPromptIds()),
                "-n", "8", "--ctx", "12", "--print-ids", "-t", "2");
        assertEquals(1, run.exitCode());
        assertEquals("", run.out());
        String lastLine = run.err().strip().lines().reduce((a, b) -> b).orElse("");
        assertTrue(lastLine.startsWith("fs: ") && lastLine.contains("do not fit the context of 12"), run.err());
        assertTrue(run.err().lines().allMatch(line -> line.startsWith("fs: ")), "no stack trace: " + run.err());
    }

    @Test
    void badArgumentsAreOneErrorLine() {
        String model = Golden.modelDir("tiny-tied").toString();
        CliRun neither = CliRun.of("run", model);
        assertEquals(2, neither.exitCode());
        assertEquals("fs: no prompt: give it after the model (fs run MODEL PROMPT), or as -p TEXT, -f FILE or --tokens "
                + "IDS (see 'fs run --help')", neither.err().strip());

        CliRun outside = CliRun.of("run", model, "--tokens", "1,999999", "--print-ids", "-t", "2");
        assertEquals(1, outside.exitCode());
        assertTrue(outside.err().strip().endsWith("--tokens: token id 999999 is outside the vocabulary (0..151935)"),
                outside.err());

        CliRun ctx = CliRun.of("run", model, "--tokens", "1", "--ctx", "50000", "-t", "2");
        assertEquals(1, ctx.exitCode());
        assertTrue(ctx.err().contains("--ctx 50000 is out of range"), ctx.err());
    }
}
