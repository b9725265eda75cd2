package fs.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.backend.cpu.VectorBackend;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.tensor.Tensor;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The CPU backend runs each of q-tied's GGUF files (its matrices read in place in the file's formats, mixed per tensor
 * as llama.cpp's presets store them) to the float64 golden of its exact dequantized weights: top-5 ids at every
 * position, their logits within 1e-3, and 8 greedy tokens. The tensors are bound here by their GGUF names, the
 * smallest binding that runs the model.
 */
class GgufModelGoldenTest {
    private static final double LOGIT_TOLERANCE = 1e-3;

    private static Tensor tensor(GgufFile gguf, String name) {
        GgufTensor t = gguf.tensor(name).orElseThrow();
        return new Tensor(name, t.type(), t.shape(), t.data());
    }

    private static Qwen3Weights weights(GgufFile gguf, Qwen3Config config) {
        List<Qwen3Weights.Layer> layers = new ArrayList<>();
        for (int i = 0; i < config.numHiddenLayers(); i++) {
            String p = "blk." + i + ".";
            layers.add(new Qwen3Weights.Layer(tensor(gguf, p + "attn_norm.weight"), tensor(gguf, p + "attn_q.weight"),
                    tensor(gguf, p + "attn_k.weight"), tensor(gguf, p + "attn_v.weight"),
                    tensor(gguf, p + "attn_output.weight"), tensor(gguf, p + "attn_q_norm.weight"),
                    tensor(gguf, p + "attn_k_norm.weight"), tensor(gguf, p + "ffn_norm.weight"),
                    tensor(gguf, p + "ffn_gate.weight"), tensor(gguf, p + "ffn_up.weight"),
                    tensor(gguf, p + "ffn_down.weight")));
        }
        Tensor embed = tensor(gguf, "token_embd.weight");
        return new Qwen3Weights(embed, layers, tensor(gguf, "output_norm.weight"), embed, List.of());
    }

    private static int[] ints(JsonNode array) {
        int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) values[i] = array.get(i).intValue();
        return values;
    }

    /** The ids of the five largest logits, largest first. */
    private static int[] top5(float[] logits) {
        int[] top = new int[5];
        boolean[] taken = new boolean[logits.length];
        for (int t = 0; t < 5; t++) {
            int best = -1;
            for (int i = 0; i < logits.length; i++) if (!taken[i] && (best < 0 || logits[i] > logits[best])) best = i;
            taken[best] = true;
            top[t] = best;
        }
        return top;
    }

    /** batchRows 48 runs the prompt as one batch (prefill tiles); 1 runs it a token at a time (decode tiles). */
    @ParameterizedTest(name = "{0}, {1} rows a batch")
    @CsvSource({"BF16, 48", "BF16, 1", "Q8_0, 48", "Q8_0, 1", "Q6_K, 48", "Q6_K, 1", "Q5_K_M, 48", "Q5_K_M, 1",
            "Q4_K_M, 48", "Q4_K_M, 1", "Q4_0, 48", "Q4_0, 1", "Q2_K, 48", "Q2_K, 1", "IQ2_XXS, 48", "IQ2_XXS, 1"})
    void matchesTheExactGoldenOfItsDequantizedWeights(String fileType, int batchRows) throws IOException {
        JsonNode golden = new ObjectMapper().readTree(QTied.dir().resolve("golden-" + fileType + ".json").toFile());
        int[] tokens = ints(golden.get("tokens"));
        int[] greedy = ints(golden.get("greedy"));
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType)); VectorBackend backend = new VectorBackend(2)) {
            Qwen3Config config = Qwen3GgufConfig.read(gguf);
            int context = tokens.length + greedy.length;
            Qwen3Model model = new Qwen3Model(config, weights(gguf, config), backend,
                    new Qwen3Model.Shape(context, batchRows, batchRows));
            float[] logits = new float[config.vocabSize()];
            for (int start = 0; start < tokens.length; start += batchRows) {
                model.forward(java.util.Arrays.copyOfRange(tokens, start, start + batchRows), start, Probe.NONE);
                for (int r = 0; r < batchRows; r++) {
                    int position = start + r;
                    JsonNode expected = golden.get("positions").get(position);
                    model.readLogits(r, logits);
                    assertArrayEquals(ints(expected.get("top_ids")), top5(logits), "position " + position);
                    for (int t = 0; t < 5; t++) {
                        double want = expected.get("top_logits").get(t).doubleValue();
                        float got = logits[expected.get("top_ids").get(t).intValue()];
                        assertEquals(want, got, LOGIT_TOLERANCE, "position " + position + ", top " + t);
                    }
                }
            }
            int next = model.argmax(model.logitRows() - 1);
            int[] generated = new int[greedy.length];
            for (int i = 0; i < greedy.length; i++) {
                generated[i] = next;
                model.forward(new int[] {next}, tokens.length + i, Probe.NONE);
                next = model.argmax(model.logitRows() - 1);
            }
            assertArrayEquals(greedy, generated);
        }
    }
}
