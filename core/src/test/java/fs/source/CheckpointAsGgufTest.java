package fs.source;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import fs.backend.cpu.VectorBackend;
import fs.chat.ChatMessage;
import fs.model.DecoderModel;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Probe;
import fs.model.SingleSequence;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A committed checkpoint and the GGUF file to_gguf.py makes of it are one model: the same config, tokenizer and
 * template, and bit-identical logits on the same backend (the same bf16 weights under other names, the norms widened
 * exactly). tiny-untied exercises a GGUF's own output.weight, which q-tied (tied) has not.
 */
class CheckpointAsGgufTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"tiny-tied", "tiny-untied"})
    void theGgufOfACheckpointIsTheSameModel(String checkpoint) throws IOException {
        Golden golden = Golden.load(checkpoint);
        Path gguf = CheckpointGguf.write(golden.modelDir(), dir.resolve(checkpoint + ".gguf"));
        int[] prompt = Arrays.copyOf(golden.promptIds(), 24);
        try (ModelSource fromDirectory = ModelSource.open(golden.modelDir());
             ModelSource fromGguf = ModelSource.open(gguf)) {
            ModelConfig config = fromGguf.config();
            ModelConfig expected = fromDirectory.config();
            assertEquals(List.of(expected.hiddenSize(), expected.numHiddenLayers(), expected.vocabSize(),
                    expected.headDim(), expected.tieWordEmbeddings()), List.of(config.hiddenSize(),
                    config.numHiddenLayers(), config.vocabSize(), config.headDim(), config.tieWordEmbeddings()));

            ModelWeights weights = ModelWeights.bind(config, fromGguf.tensors());
            if (config.tieWordEmbeddings()) {
                assertSame(weights.embedTokens(), weights.lmHead());
            } else {
                assertSame(fromGguf.tensors().find("output.weight").orElseThrow(), weights.lmHead());
                assertNotSame(weights.embedTokens(), weights.lmHead());
            }
            assertArrayEquals(logits(fromDirectory, prompt), logits(fromGguf, prompt), checkpoint);

            String text = "Give me a short introduction to <think>LLMs</think>.";
            assertArrayEquals(fromDirectory.tokenizer().encode(text), fromGguf.tokenizer().encode(text));
            List<ChatMessage> chat = List.of(new ChatMessage("user", "Hello"));
            assertEquals(fromDirectory.chatTemplate().render(chat, true, null),
                    fromGguf.chatTemplate().render(chat, true, null));
        }
    }

    /** Every logit of every prompt position, in one batch on the CPU. */
    private static float[] logits(ModelSource source, int[] prompt) {
        ModelConfig config = source.config();
        try (VectorBackend backend = new VectorBackend(2)) {
            SingleSequence model = new SingleSequence(
                    new DecoderModel(config, ModelWeights.bind(config, source.tensors()), backend),
                    new SingleSequence.Shape(prompt.length, prompt.length, prompt.length));
            float[] all = new float[prompt.length * config.vocabSize()];
            float[] row = new float[config.vocabSize()];
            model.forwardInBatches(prompt, 0, Probe.NONE, (first, rows) -> {
                for (int r = 0; r < rows; r++) {
                    model.readLogits(r, row);
                    System.arraycopy(row, 0, all, (first + r) * row.length, row.length);
                }
            });
            return all;
        }
    }
}
