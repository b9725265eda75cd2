package fs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import fs.FsException;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.source.ModelSource;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** -ot's subset: PATTERN=CPU on the GGUF names of the layers' feed-forward tensors, whole blocks at once. */
class TensorOverrideTest {

    @Test
    void aValueIsPatternEqualsCpuAndCommasSeparateSeveral() {
        assertEquals(List.of("exps", "blk\\.1\\."), TensorOverride.parse("exps=CPU,blk\\.1\\.=cpu").stream()
                .map(o -> o.pattern().pattern()).toList());
        assertEquals("-ot exps: give PATTERN=CPU, e.g. -ot exps=CPU",
                assertThrows(FsException.class, () -> TensorOverride.parse("exps")).getMessage());
        assertEquals("-ot exps=CUDA0: fs moves tensors to the CPU only (PATTERN=CPU), not to CUDA0",
                assertThrows(FsException.class, () -> TensorOverride.parse("exps=CUDA0")).getMessage());
        assertEquals("-ot (exps=CPU: not a regular expression: Unclosed group",
                assertThrows(FsException.class, () -> TensorOverride.parse("(exps=CPU")).getMessage());
    }

    /** tiny-moe: layers 0 and 2 are experts, layer 1 a dense MLP. */
    @Test
    void aPatternMovesTheWholeFeedForwardOfEachLayerItFindsATensorOf() {
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-moe"))) {
            ModelConfig config = source.config();
            assertEquals(Set.of(0, 2), only("exps", config));
            assertEquals(Set.of(0, 2), only("ffn_up_exps", config), "one expert tensor moves its whole block");
            assertEquals(Set.of(1), only("blk\\.1\\.ffn_(up|gate|down)\\.", config));
            assertEquals(Set.of(0, 1, 2), only("ffn_norm", config));
            assertEquals("-ot nothing=CPU matches no tensor of this model (GGUF names, e.g. blk.0.ffn_gate.weight, "
                    + "blk.0.ffn_gate_exps.weight)",
                    assertThrows(FsException.class, () -> only("nothing", config)).getMessage());
            assertEquals("-ot attn=CPU matches blk.0.attn_norm.weight: fs moves only the layers' feed-forward tensors "
                    + "(blk.N.ffn_*) to the CPU, a layer's whole feed-forward block at once",
                    assertThrows(FsException.class, () -> only("attn", config)).getMessage());
            assertEquals("-ot output=CPU matches output_norm.weight: fs moves only the layers' feed-forward tensors "
                    + "(blk.N.ffn_*) to the CPU, a layer's whole feed-forward block at once",
                    assertThrows(FsException.class, () -> only("output", config)).getMessage());
        }
    }

    @Test
    void expsOnTheCpuIsCpuMoe() {
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-moe"))) {
            ModelConfig config = source.config();
            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            OffloadPlan ot = OffloadPlan.of(new Offload(Offload.ALL, 0, TensorOverride.parse("exps=CPU")), config,
                    weights, 1024, Long.MAX_VALUE);
            OffloadPlan cpuMoe = OffloadPlan.of(new Offload(Offload.ALL, Offload.ALL, List.of()), config, weights,
                    1024, Long.MAX_VALUE);
            assertEquals(cpuMoe, ot);
        }
    }

    private static Set<Integer> only(String pattern, ModelConfig config) {
        return TensorOverride.parse(pattern + "=CPU").getFirst().feedForwardLayers(config);
    }
}
