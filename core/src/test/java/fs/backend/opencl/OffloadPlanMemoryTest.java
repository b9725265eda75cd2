package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import fs.backend.KvCacheTypes;
import fs.backend.cpu.VectorBackend;
import fs.engine.Offload;
import fs.engine.OffloadPlan;
import fs.model.DecoderModel;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.source.ModelSource;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The offload plan's device bytes are what the device then holds: the weights a split model uploads to it, and its
 * layers' KV cache, as the backend counts its allocations (PoCL in CI).
 */
class OffloadPlanMemoryTest {
    private static final int CONTEXT = 64;

    /** tiny-moe (3 layers, tied): the last layer; two and the first layer's experts; every layer and the output. */
    @ParameterizedTest
    @ValueSource(strings = {"1 0", "2 1", "4 0"})
    void thePlansDeviceBytesAreWhatTheDeviceHolds(String split) {
        int gpuLayers = Integer.parseInt(split.split(" ")[0]), cpuMoe = Integer.parseInt(split.split(" ")[1]);
        try (ModelSource source = ModelSource.open(Golden.modelDir("tiny-moe"));
             OpenClBackend device = new OpenClBackend(OpenClTestSupport.device(), KernelDesign.CPU);
             VectorBackend cpu = new VectorBackend(1)) {
            ModelConfig config = source.config();
            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            long layerCache = KvCacheTypes.F16.bytesPerPosition(1, config.numKeyValueHeads(), config.headDim())
                    * CONTEXT;
            OffloadPlan plan = OffloadPlan.of(new Offload(gpuLayers, cpuMoe, List.of()), config, weights, layerCache,
                    device.memorySize());
            long before = device.memoryInUse();
            DecoderModel model = new DecoderModel(config, weights, plan.placement(device, cpu));
            assertEquals(plan.deviceWeightBytes(), device.memoryInUse() - before, split + ": weights");
            long uploaded = device.memoryInUse();
            model.allocateCache(1, CONTEXT, KvCacheTypes.F16);
            assertEquals(plan.deviceCacheBytes(), device.memoryInUse() - uploaded, split + ": KV cache");
        }
    }
}
