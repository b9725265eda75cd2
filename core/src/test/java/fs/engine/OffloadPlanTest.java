package fs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.backend.KvCacheTypes;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.source.ModelSource;
import fs.tensor.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * -ngl's plan against the bytes of the checkpoint's own tensors, counted here by name from the file: which layers
 * auto takes for a given device memory, and what each side then holds.
 */
class OffloadPlanTest {
    private static final int CONTEXT = 256;

    @Test
    void fitTakesLayersFromTheOutputEndAndTheOutputOnlyAfterEveryLayer() {
        long[] layers = {10, 20, 30};
        assertEquals(0, OffloadPlan.fit(29, layers, 5));
        assertEquals(1, OffloadPlan.fit(30, layers, 5));
        assertEquals(1, OffloadPlan.fit(49, layers, 5));
        assertEquals(2, OffloadPlan.fit(50, layers, 5));
        assertEquals(3, OffloadPlan.fit(64, layers, 5), "every layer, but not the output");
        assertEquals(4, OffloadPlan.fit(65, layers, 5), "every layer and the output");
        assertEquals(0, OffloadPlan.fit(-1, layers, 5), "a device smaller than the margin");
    }

    /** tiny-moe: 3 layers (0 and 2 experts, 1 dense), tied embeddings. */
    @Test
    void autoPlansFromTheDevicesMemoryLessTheMarginAndTheTensorsBytes() {
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-moe"))) {
            ModelConfig config = source.config();
            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            List<Tensor> tensors = source.tensors().tensors();
            long cache = KvCacheTypes.F16.bytesPerPosition(1, config.numKeyValueHeads(), config.headDim()) * CONTEXT;
            long layer2 = bytes(tensors, "model.layers.2.") + cache;
            long layer1 = bytes(tensors, "model.layers.1.") + cache;
            long total = bytes(tensors, "");

            OffloadPlan one = auto(config, weights, cache, Offload.DEFAULT_FIT_TARGET + layer2 + layer1 - 1);
            assertEquals(1, one.gpuLayers());
            assertEquals(layer2 - cache, one.deviceWeightBytes());
            assertEquals(cache, one.deviceCacheBytes());
            assertEquals(total - (layer2 - cache), one.hostWeightBytes(), "the rest, the embedding included");
            assertEquals(2 * cache, one.hostCacheBytes());

            assertEquals(2, auto(config, weights, cache, Offload.DEFAULT_FIT_TARGET + layer2 + layer1).gpuLayers());
            assertEquals(0, auto(config, weights, cache, Offload.DEFAULT_FIT_TARGET + layer2 - 1).gpuLayers());

            OffloadPlan whole = auto(config, weights, cache, Offload.DEFAULT_FIT_TARGET + total + 3 * cache);
            assertEquals(4, whole.gpuLayers(), "every layer and the output");
            assertEquals(total, whole.deviceWeightBytes(), "the whole model, the embedding (= lm_head) once");
            assertEquals(0, whole.hostWeightBytes());
            assertEquals(3, auto(config, weights, cache, Offload.DEFAULT_FIT_TARGET + total + 3 * cache - 1).gpuLayers(),
                    "a byte short of the output");
        }
    }

    @Test
    void theExpertsOnTheCpuAreNotCountedOnTheDevice() {
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-moe"))) {
            ModelConfig config = source.config();
            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            List<Tensor> tensors = source.tensors().tensors();
            long experts = bytes(tensors, "model.layers.0.mlp.") + bytes(tensors, "model.layers.0.post_attention")
                    + bytes(tensors, "model.layers.2.mlp.") + bytes(tensors, "model.layers.2.post_attention");
            long total = bytes(tensors, "");
            OffloadPlan plan = OffloadPlan.of(new Offload(Offload.ALL, Offload.ALL, List.of()), config, weights, 0, Long.MAX_VALUE);
            assertEquals(4, plan.gpuLayers());
            long embedding = bytes(tensors, "model.embed_tokens.");
            // The output (the tied table as lm_head) is on the device; the CPU embeds from the same table, mapped.
            assertEquals(total - experts, plan.deviceWeightBytes());
            assertEquals(experts + embedding, plan.hostWeightBytes());
            OffloadPlan first = OffloadPlan.of(new Offload(Offload.ALL, 1, List.of()), config, weights, 0, Long.MAX_VALUE);
            long layer0 = bytes(tensors, "model.layers.0.mlp.") + bytes(tensors, "model.layers.0.post_attention");
            assertEquals(total - layer0, first.deviceWeightBytes());
        }
    }

    private static OffloadPlan auto(ModelConfig config, ModelWeights weights, long cache, long memory) {
        return OffloadPlan.of(new Offload(Offload.AUTO, 0, List.of()), config, weights, cache, memory);
    }

    /** The bytes of the file's tensors whose names start with {@code prefix}. */
    private static long bytes(List<Tensor> tensors, String prefix) {
        return tensors.stream().filter(t -> t.name().startsWith(prefix)).mapToLong(Tensor::byteSize).sum();
    }
}
