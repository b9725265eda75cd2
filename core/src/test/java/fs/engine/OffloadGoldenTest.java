package fs.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.opencl.OpenClBackend;
import fs.generate.Generator;
import fs.generate.RecordingSink;
import fs.generate.SamplingParams;
import fs.generate.Scheduler;
import fs.model.FeedForward;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.model.Placement;
import fs.model.Probe;
import fs.model.SingleSequence;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * A model split between an OpenCL device (PoCL in CI) and the CPU, as -ngl, --cpu-moe and --n-cpu-moe place it, meets
 * the float64 goldens as the unsplit model does on either backend: every prompt position's top ids, the last
 * position's every logit within 1e-3, and the greedy continuation through the split KV cache. Each case also checks
 * that the parts ran where the plan says.
 */
class OffloadGoldenTest {
    /** The unsplit model's tolerance against the float64 goldens (ModelGoldenTest's). */
    private static final double TOLERANCE = 1e-3;

    record Split(String checkpoint, int gpuLayers, int cpuMoeLayers) {
        @Override
        public String toString() {
            return checkpoint + " -ngl " + Offload.spelling(gpuLayers)
                    + (cpuMoeLayers == 0 ? "" : " --n-cpu-moe " + Offload.spelling(cpuMoeLayers));
        }
    }

    /**
     * Dense: tiny-untied (2 layers, its own lm_head) and tiny-tied-head-sharded (3 layers); tiny-moe has 3 layers, the
     * middle one dense. -ngl 0 is all on the CPU, 1 and 2 split the layers, the layer count leaves the output on the
     * CPU; the experts on the CPU under every layer offloaded, or some under some. (-ngl all is the unsplit model on
     * the device, which the OpenCL golden tests check.)
     */
    static final List<Split> SPLITS = List.of(
            new Split("tiny-untied", 0, 0),
            new Split("tiny-untied", 1, 0),
            new Split("tiny-tied-head-sharded", 3, 0),
            new Split("tiny-moe", 1, 0),
            new Split("tiny-moe", Offload.ALL, Offload.ALL),
            new Split("tiny-moe", 2, 1));

    @ParameterizedTest
    @FieldSource("SPLITS")
    void aSplitModelMeetsTheGoldens(Split split) throws IOException {
        Golden golden = Golden.load(split.checkpoint());
        int n = golden.promptIds().length;
        StringWriter log = new StringWriter();
        Engine.Options options = new Engine.Options(BackendChoice.OPENCL, null, 2, n + 16, "--ctx", KvCacheType.F32,
                KvCacheType.F32, new Offload(split.gpuLayers(), split.cpuMoeLayers(), List.of()), new PrintWriter(log, true));
        try (LoadedModel<SingleSequence> loaded = Engine.load(Engine.open(golden.modelDir().toString(),
                new PrintWriter(log)), options, context -> (model, types) ->
                        new SingleSequence(model, SingleSequence.Shape.forEveryPosition(context, n), types))) {
            assertPlaced(split, loaded.config(), loaded.model().placement(), log.toString());
            SingleSequence model = loaded.state();
            float[] logits = new float[model.config().vocabSize()];
            model.forward(golden.promptIds(), 0, Probe.NONE);
            for (int position = 0; position < n; position++) {
                model.readLogits(position, logits);
                int[] top = golden.positions().get(position).topIds();
                assertEquals(top[0], argmax(logits), split + " position " + position + ": top id");
            }
            for (int id = 0; id < logits.length; id++) {
                assertEquals(golden.lastLogits()[id], logits[id], TOLERANCE, split + ": last logit " + id);
            }
            int[] expected = golden.greedyGeneratedIds();
            Generator generator = new Generator(model, model.config().eosTokenIds().stream()
                    .mapToInt(Integer::intValue).toArray(), SamplingParams.greedy());
            assertArrayEquals(expected, generator.generate(golden.greedyPromptIds(), expected.length, id -> {}).ids(),
                    split + ": greedy continuation");
        }
    }

    /**
     * fs serve's batching across a split: a scheduler of two slots on tiny-moe with its last 2 layers on the device and
     * the first layer's experts on the CPU gives three concurrent greedy requests the tokens each gets alone.
     */
    @Test
    void concurrentRequestsOnASplitGetTheTokensEachGetsAlone() throws Exception {
        Golden golden = Golden.load("tiny-moe");
        int[][] prompts = new int[3][];
        for (int i = 0; i < prompts.length; i++) prompts[i] = Arrays.copyOfRange(golden.promptIds(), 4 * i, 9 * i + 3);
        int maxTokens = 6;
        Engine.Options options = new Engine.Options(BackendChoice.OPENCL, null, 2, 32, "--ctx", KvCacheType.F32,
                KvCacheType.F32, new Offload(2, 1, List.of()), new PrintWriter(new StringWriter()));
        try (LoadedModel<Scheduler> loaded = Engine.load(Engine.open(golden.modelDir().toString(),
                new PrintWriter(new StringWriter())), options, context -> (model, types) ->
                        new Scheduler(model, new Scheduler.Config(2, context, 4, 4), types))) {
            assertEquals(2, loaded.gpuLayers());
            List<int[]> results;
            try (Scheduler scheduler = loaded.state()) {
                results = RecordingSink.greedy(scheduler, List.of(prompts), maxTokens);
            }
            SingleSequence alone = new SingleSequence(loaded.model(), SingleSequence.Shape.forGeneration(32, 16),
                    KvCacheTypes.F32);
            for (int i = 0; i < prompts.length; i++) {
                int[] expected = new Generator(alone, new int[0], SamplingParams.greedy())
                        .generate(prompts[i], maxTokens, id -> {}).ids();
                assertEquals(maxTokens, expected.length);
                assertArrayEquals(expected, results.get(i), "request " + i);
            }
        }
    }

    /** The layers from the output end on the device, the rest and the chosen experts on the CPU, as the log says. */
    private static void assertPlaced(Split split, ModelConfig config, Placement placement, String log) {
        int layers = placement.layers().size();
        int offloaded = (int) Math.min(split.gpuLayers(), layers + 1L);
        for (int l = 0; l < layers; l++) {
            boolean onDevice = l >= layers - Math.min(offloaded, layers);
            Placement.Layer layer = placement.layers().get(l);
            assertEquals(onDevice, layer.attention() instanceof OpenClBackend, split + ": layer " + l + " attention");
            boolean expertsOnCpu = l < split.cpuMoeLayers() && config.feedForward(l) instanceof FeedForward.Experts;
            assertEquals(onDevice && !expertsOnCpu, layer.feedForward() instanceof OpenClBackend,
                    split + ": layer " + l + " feed-forward");
        }
        assertEquals(offloaded > layers, placement.output() instanceof OpenClBackend, split + ": output");
        assertTrue(log.contains("-ngl " + Offload.spelling(split.gpuLayers()) + ": " + offloaded + "/" + (layers + 1)
                + " layers on opencl"), log);
    }

    private static int argmax(float[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
        return best;
    }
}
