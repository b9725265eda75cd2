package fs.quantize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.model.GgufConfigReader;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * models/q-moe: a Qwen3-MoE (qwen3moe, 8 experts, top 3) as llama-quantize wrote it from its BF16 file: the plan of
 * each preset gives every tensor llama.cpp's type, in its order, including llama.cpp's rules for its eight experts
 * (attn_k and attn_v in Q8_0, attn_output in Q5_K) and the router left in F32.
 */
class MoeQuantizationPlanTest {
    static Path qMoe(String file) {
        return Path.of(System.getProperty("fs.repo"), "models", "q-moe", file);
    }

    private static List<Tensor> tensors(GgufFile file) {
        List<Tensor> tensors = new ArrayList<>();
        for (GgufTensor t : file.tensors()) tensors.add(new Tensor(t.name(), t.type(), t.shape(), t.data()));
        return tensors;
    }

    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q2_K", "IQ2_XXS"})
    void matchesLlamaQuantizeOnQMoe(String type) {
        try (GgufFile source = GgufFile.open(qMoe("model-BF16.gguf"));
                GgufFile llama = GgufFile.open(qMoe("model-" + type + ".gguf"))) {
            boolean imatrix = type.equals("IQ2_XXS"); // made with q-moe's imatrix.gguf
            QuantizationPlan plan = QuantizationPlan.of(QuantizationType.parse(type), GgufConfigReader.read(source),
                    tensors(source), imatrix);
            List<String> expected = llama.tensors().stream().map(t -> t.name() + " " + t.type()).toList();
            List<String> planned = plan.tensors().stream().map(e -> e.name() + " " + e.type()).toList();
            assertEquals(expected, planned);
            for (int i = 0; i < plan.tensors().size(); i++) {
                assertEquals(llama.tensors().get(i).data().byteSize(), plan.tensors().get(i).bytes());
                assertArrayEquals(llama.tensors().get(i).shape(), plan.tensors().get(i).shape());
            }
        }
    }

    /** What the eight experts change, spelled out for Q4_K_M and Q2_K (the dense rules would say otherwise). */
    @Test
    void eightExpertsBumpAttentionAndTheRouterStaysF32() {
        try (GgufFile source = GgufFile.open(qMoe("model-BF16.gguf"))) {
            var config = GgufConfigReader.read(source);
            QuantizationPlan q4 = QuantizationPlan.of(QuantizationType.Q4_K_M, config, tensors(source), false);
            QuantizationPlan q2 = QuantizationPlan.of(QuantizationType.Q2_K, config, tensors(source), false);
            assertEquals(DType.Q8_0, type(q4, "blk.1.attn_v.weight"));
            assertEquals(DType.Q8_0, type(q4, "blk.1.attn_k.weight"));
            assertEquals(DType.Q5_K, type(q4, "blk.1.attn_output.weight"));
            assertEquals(DType.Q6_K, type(q4, "blk.1.ffn_down_exps.weight")); // the last eighth: use_more_bits
            assertEquals(DType.Q4_K, type(q4, "blk.1.ffn_gate_exps.weight"));
            assertEquals(DType.F32, type(q4, "blk.0.ffn_gate_inp.weight"));
            assertEquals(DType.Q3_K, type(q2, "blk.0.ffn_down_exps.weight"));
            assertEquals(DType.Q5_K, type(q2, "blk.0.attn_output.weight"));
            assertEquals(DType.F32, type(QuantizationPlan.of(QuantizationType.BF16, config, tensors(source), false),
                    "blk.0.ffn_gate_inp.weight"));
            assertTrue(q4.tensors().stream().anyMatch(e -> e.shape().length == 3));
        }
    }

    private static DType type(QuantizationPlan plan, String name) {
        return plan.tensors().stream().filter(e -> e.name().equals(name)).findFirst().orElseThrow().type();
    }
}
