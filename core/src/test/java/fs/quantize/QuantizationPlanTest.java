package fs.quantize;

import fs.model.FeedForward;
import fs.model.Qwen3;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.QTied;
import fs.model.GgufConfigReader;
import fs.model.ModelConfig;
import fs.model.RopeScaling;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QuantizationPlanTest {
    /** The tensors of a GGUF file as plan input (names, shapes; the data is not read). */
    private static List<Tensor> tensors(GgufFile file) {
        List<Tensor> tensors = new ArrayList<>();
        for (GgufTensor t : file.tensors()) tensors.add(new Tensor(t.name(), t.type(), t.shape(), t.data()));
        return tensors;
    }

    /** llama.cpp's own files of q-tied: the plan made from the BF16 file gives each tensor llama.cpp's type, in its order. */
    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q2_K", "IQ2_XXS"})
    void matchesLlamaQuantizeOnQTied(String type) {
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"));
                GgufFile llama = GgufFile.open(QTied.gguf(type))) {
            boolean imatrix = type.equals("IQ2_XXS"); // llama.cpp made that one with an importance matrix
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.parse(type), GgufConfigReader.read(source),
                    tensors(source), imatrix);
            List<String> expected = llama.tensors().stream().map(t -> t.name() + " " + t.type()).toList();
            List<String> planned = plan.tensors().stream().map(e -> e.name() + " " + e.type()).toList();
            assertEquals(expected, planned);
            for (int i = 0; i < plan.tensors().size(); i++) {
                assertEquals(llama.tensors().get(i).data().byteSize(), plan.tensors().get(i).bytes());
            }
            assertEquals(llama.metadata().nonNegativeInt("general.file_type"), plan.type().fileType());
        }
    }

    @Test
    void bf16KeepsEveryMatrixInBf16AndTheNormsInF32() {
        try (GgufFile source = GgufFile.open(QTied.gguf("BF16"))) {
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.BF16, GgufConfigReader.read(source),
                    tensors(source), false);
            Map<String, DType> expected = new TreeMap<>();
            for (GgufTensor t : source.tensors()) expected.put(t.name(), t.type());
            Map<String, DType> planned = new TreeMap<>();
            for (QuantizationPlan.Entry e : plan.tensors()) planned.put(e.name(), e.type());
            assertEquals(expected, planned);
            assertEquals(32, plan.type().fileType());
            assertTrue(plan.firstNeedingImportance().isEmpty());
        }
    }

    /**
     * llama-quantize --dry-run's choices (llama-quantize-dry-run.txt) for two models made for it: a, 28 layers with
     * two query heads per kv head (Qwen3-0.6B's depth and grouping), and b, 9 layers with four per kv head (where
     * Q2_K's and IQ2_XXS's attn_v go to Q4_K, and a first eighth of the layers exists): every preset, every tensor,
     * the same type in the same order.
     */
    @Test
    void matchesLlamaQuantizesDryRunOnDeepModels() throws IOException {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        List<String> section = null;
        for (String line : Files.readAllLines(ImportanceMatrixTest.resource("llama-quantize-dry-run.txt"))) {
            if (line.startsWith("#")) continue;
            if (line.startsWith("== ")) expected.put(line.substring(3), section = new ArrayList<>());
            else section.add(line);
        }
        assertEquals(20, expected.size());
        for (var entry : expected.entrySet()) {
            String[] modelAndType = entry.getKey().split(" ");
            boolean a = modelAndType[0].equals("a");
            int layers = a ? 28 : 9, heads = a ? 4 : 8, headDim = a ? 64 : 32;
            ModelConfig config = new ModelConfig(new Qwen3(), 256, layers, heads, 2, headDim,
                    java.util.Collections.nCopies(layers, new FeedForward.Dense(256)), 8064, 1e-6f, 1e6f,
                    new RopeScaling.Plain(), 40960, true, 8000, List.of(8002), "bfloat16");
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.parse(modelAndType[1]), config,
                    qwen3Tensors(256, layers, heads, 2, headDim, 256), false);
            assertEquals(entry.getValue(), plan.tensors().stream().map(e -> e.name() + " " + e.type()).toList(),
                    entry.getKey());
        }
    }

    /** The trained checkpoint's shapes (../shared/trained: 4 layers, heads 4 × 64, 2 kv heads, tied). */
    private static ModelConfig trainedConfig(int hidden, int layers) {
        return new ModelConfig(new Qwen3(), hidden, layers, 4, 2, 64,
                java.util.Collections.nCopies(layers, new FeedForward.Dense(768)), 8064, 1e-6f, 1e6f, new RopeScaling.Plain(), 40960, true,
                8000, List.of(8002), "bfloat16");
    }

    private static List<Tensor> qwen3Tensors(int hidden, int layers, int headDim, int ffn) {
        return qwen3Tensors(hidden, layers, 4, 2, headDim, ffn);
    }

    private static List<Tensor> qwen3Tensors(int hidden, int layers, int heads, int kvHeads, int headDim, int ffn) {
        List<Tensor> tensors = new ArrayList<>();
        tensors.add(tensor("token_embd.weight", 8064, hidden));
        tensors.add(tensor("output_norm.weight", hidden));
        for (int l = 0; l < layers; l++) {
            String p = "blk." + l + ".";
            tensors.add(tensor(p + "attn_norm.weight", hidden));
            tensors.add(tensor(p + "attn_q.weight", heads * headDim, hidden));
            tensors.add(tensor(p + "attn_k.weight", kvHeads * headDim, hidden));
            tensors.add(tensor(p + "attn_v.weight", kvHeads * headDim, hidden));
            tensors.add(tensor(p + "attn_output.weight", hidden, heads * headDim));
            tensors.add(tensor(p + "attn_q_norm.weight", headDim));
            tensors.add(tensor(p + "attn_k_norm.weight", headDim));
            tensors.add(tensor(p + "ffn_norm.weight", hidden));
            tensors.add(tensor(p + "ffn_gate.weight", ffn, hidden));
            tensors.add(tensor(p + "ffn_up.weight", ffn, hidden));
            tensors.add(tensor(p + "ffn_down.weight", hidden, ffn));
        }
        return tensors;
    }

    private static Tensor tensor(String name, long... shape) {
        return new Tensor(name, DType.BF16, shape, MemorySegment.NULL);
    }

    private static Map<String, DType> matrixTypes(QuantizationPlan plan) {
        Map<String, DType> types = new TreeMap<>();
        for (QuantizationPlan.Entry e : plan.tensors()) {
            if (e.shape().length == 2) types.put(e.name(), e.type());
        }
        return types;
    }

    /**
     * Four layers, as ../shared/trained: llama.cpp's Q4_K_M and Q5_K_M files of it put attn_v and ffn_down of layers
     * 2 and 3 (and only those) in Q6_K, Q2_K every attn_v, attn_output and ffn_down in Q3_K (read off those files).
     */
    @Test
    void aFourLayerModelGetsLlamaCppsMix() {
        ModelConfig config = trainedConfig(256, 4);
        List<Tensor> tensors = qwen3Tensors(256, 4, 64, 768);
        for (QuantizationType type : List.of(QuantizationType.Q4_K_M, QuantizationType.Q5_K_M)) {
            Map<String, DType> types = matrixTypes(QuantizationPlan.of(type, config, tensors, false));
            for (var entry : types.entrySet()) {
                String name = entry.getKey();
                boolean more = (name.startsWith("blk.2.") || name.startsWith("blk.3."))
                        && (name.contains("attn_v") || name.contains("ffn_down"));
                DType expected = name.equals("token_embd.weight") || more ? DType.Q6_K : type.defaultType();
                assertEquals(expected, entry.getValue(), type + " " + name);
            }
        }
        Map<String, DType> q2 = matrixTypes(QuantizationPlan.of(QuantizationType.Q2_K, config, tensors, false));
        for (var entry : q2.entrySet()) {
            String name = entry.getKey();
            boolean q3 = name.contains("attn_v") || name.contains("attn_output") || name.contains("ffn_down");
            DType expected = name.equals("token_embd.weight") ? DType.Q6_K : q3 ? DType.Q3_K : DType.Q2_K;
            assertEquals(expected, entry.getValue(), "Q2_K " + name);
        }
    }

    /** Rows of 64 (models/tiny-tied) are no whole K-quant block: each type falls back, down to what fits. */
    @Test
    void rowsThatAreNotWholeBlocksFallBack() {
        ModelConfig config = trainedConfig(64, 2);
        List<Tensor> tensors = qwen3Tensors(64, 2, 16, 128);
        Map<String, DType> q4km = matrixTypes(QuantizationPlan.of(QuantizationType.Q4_K_M, config, tensors, false));
        // llama.cpp: the tied embedding in Q8_0 (rows not whole Q4_K blocks), Q4_K → Q5_0 and Q6_K → Q8_0; fs has no
        // Q5_0 and writes Q8_0
        assertEquals(DType.Q8_0, q4km.get("token_embd.weight"));
        assertEquals(DType.Q8_0, q4km.get("blk.0.attn_q.weight"));
        assertEquals(DType.Q8_0, q4km.get("blk.0.attn_v.weight"));
        Map<String, DType> q2k = matrixTypes(QuantizationPlan.of(QuantizationType.Q2_K, config, tensors, false));
        assertEquals(DType.Q4_0, q2k.get("blk.0.attn_q.weight")); // Q2_K → Q4_0, as llama.cpp
        assertEquals(DType.Q4_0, q2k.get("blk.1.ffn_down.weight")); // Q3_K → Q4_0
        Map<String, DType> iq2 = matrixTypes(QuantizationPlan.of(QuantizationType.IQ2_XXS, config, tensors, false));
        assertEquals(DType.Q8_0, iq2.get("blk.0.attn_q.weight")); // llama.cpp's IQ4_NL
        assertFalse(QuantizationPlan.of(QuantizationType.IQ2_XXS, config, tensors, false)
                .firstNeedingImportance().isPresent(), "nothing is left in IQ2_XXS");

        List<Tensor> odd = List.of(tensor("token_embd.weight", 8064, 40), tensor("blk.0.attn_q.weight", 40, 40));
        Map<String, DType> f16 = matrixTypes(QuantizationPlan.of(QuantizationType.Q4_K_M, config, odd, false));
        assertEquals(Map.of("token_embd.weight", DType.F16, "blk.0.attn_q.weight", DType.F16), f16);
    }

    @Test
    void iq2XxsNeedsAnImportanceMatrixForItsLayerMatrices() {
        List<Tensor> tensors = qwen3Tensors(256, 4, 64, 768);
        QuantizationPlan plan = QuantizationPlan.of(QuantizationType.IQ2_XXS, trainedConfig(256, 4), tensors, false);
        assertEquals("blk.0.attn_k.weight", plan.firstNeedingImportance().orElseThrow().name());
        assertEquals(DType.Q5_K, matrixTypes(plan).get("token_embd.weight"));
        for (QuantizationType type : QuantizationType.values()) {
            if (type == QuantizationType.IQ2_XXS) continue;
            assertTrue(QuantizationPlan.of(type, trainedConfig(256, 4), tensors, false).firstNeedingImportance()
                    .isEmpty(), type.name());
        }
    }

    @Test
    void anUntiedOutputTakesTheOutputsTypeAndTheEmbeddingThePresets() {
        List<Tensor> tensors = new ArrayList<>(qwen3Tensors(256, 1, 64, 768));
        tensors.add(tensor("output.weight", 8064, 256));
        ModelConfig config = trainedConfig(256, 1);
        Map<String, DType> q4 = matrixTypes(QuantizationPlan.of(QuantizationType.Q4_0, config, tensors, false));
        assertEquals(DType.Q6_K, q4.get("output.weight"));
        assertEquals(DType.Q4_0, q4.get("token_embd.weight"));
        Map<String, DType> iq2 = matrixTypes(QuantizationPlan.of(QuantizationType.IQ2_XXS, config, tensors, true));
        assertEquals(DType.Q5_K, iq2.get("output.weight"));
        assertEquals(DType.Q2_K, iq2.get("token_embd.weight"));
        QuantizationPlan plan = QuantizationPlan.of(QuantizationType.Q8_0, config, tensors, false);
        assertEquals(List.of("output.weight", "output_norm.weight", "token_embd.weight", "blk.0.attn_k.weight"),
                plan.tensors().stream().limit(4).map(QuantizationPlan.Entry::name).toList());
    }
}
