package fs.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.api.FsModel;
import fs.backend.KvCacheType;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.OpenClBackend;
import fs.generate.Generator;
import fs.generate.SamplingParams;
import fs.model.Golden;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An OpenCL device (PoCL in CI) that runs out of memory halfway through uploading tiny-moe, made to by
 * {@link OpenClBackend#MEMORY_LIMIT} at half its layers' weights, which the plan does not know: a split the user fixed
 * (-ngl N or all, or the whole model under --backend opencl) fails in one line with the layers, the bytes and what
 * -ngl auto would take; -ngl auto plans again from what the device held, here none of it, and runs on the CPU; through
 * Engine.load and the library alike.
 */
class DeviceOutOfMemoryTest {
    private static final int CONTEXT = 64;
    private static final Golden GOLDEN = load("tiny-moe");

    @BeforeEach
    void limitTheDeviceToHalfTheLayers() {
        System.setProperty(OpenClBackend.MEMORY_LIMIT, Long.toString(plan(3).deviceWeightBytes() / 2));
    }

    /** The plan of -ngl {@code gpuLayers} for tiny-moe on a device of unbounded memory. */
    private static OffloadPlan plan(int gpuLayers) {
        try (ModelSource source = ModelSource.open(GOLDEN.modelDir())) {
            ModelConfig config = source.config();
            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            return OffloadPlan.of(new Offload(gpuLayers, 0, List.of()), config, weights, 0, Long.MAX_VALUE);
        }
    }

    @AfterEach
    void unlimit() {
        System.clearProperty(OpenClBackend.MEMORY_LIMIT);
    }

    @Test
    void aSplitTheUserFixedFailsInOneLineWithTheLayersAndBytes() {
        for (Offload fixed : new Offload[] {new Offload(Offload.ALL, 0, List.of()), new Offload(3, 0, List.of()),
                null}) {
            StringWriter log = new StringWriter();
            FsException e = assertThrows(FsException.class, () -> load(fixed, log));
            String subject = fixed == null ? "the model" : "-ngl " + Offload.spelling(fixed.gpuLayers());
            int layers = fixed == null ? 4 : Math.min(fixed.gpuLayers(), 4);
            assertTrue(e.getMessage().startsWith(subject + " does not fit opencl ("), e.getMessage());
            assertTrue(e.getMessage().contains("): " + layers + "/4 layers need "), e.getMessage());
            assertTrue(e.getMessage().contains(", and it ran out at "), e.getMessage());
            assertTrue(e.getMessage().endsWith(" in use; offload fewer layers with -ngl (-ngl auto would take 0)"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("\n"), "one line");
        }
    }

    @Test
    void ngAutoPlansAgainFromWhatTheDeviceHeldAndRunsWhereThatSays() {
        StringWriter log = new StringWriter();
        try (LoadedModel<SingleSequence> loaded = load(new Offload(Offload.AUTO, 0, List.of()), log)) {
            assertTrue(loaded.model().placement().backends().stream().allMatch(b -> b instanceof VectorBackend),
                    "no layer fits what the device held with auto's 1 GiB margin: the CPU");
            assertEquals(0, loaded.gpuLayers());
            List<String> lines = log.toString().lines().filter(l -> l.contains("ran out")).toList();
            assertEquals(1, lines.size(), log.toString());
            assertTrue(lines.getFirst().startsWith("fs: running on the CPU: opencl ("), lines.getFirst());
            assertTrue(lines.getFirst().contains(" ran out of memory: 4/4 layers need "), lines.getFirst());
            assertGeneratesTheGoldensTokens(loaded.state());
        }
    }

    /**
     * A device that holds all but half the layers' weights, with no fit target (-fitt 0): auto plans the whole model,
     * runs out partway, and plans again from what the device held: the 3 layers, not the output (its embedding-sized
     * lm_head is most of the model), and the split runs the golden's tokens.
     */
    @Test
    void ngAutoWithNoFitTargetReplansToTheLayersThatFitWhatTheDeviceHeld() {
        System.setProperty(OpenClBackend.MEMORY_LIMIT,
                Long.toString(plan(Offload.ALL).deviceWeightBytes() - plan(3).deviceWeightBytes() / 2));
        StringWriter log = new StringWriter();
        try (LoadedModel<SingleSequence> loaded = load(new Offload(Offload.AUTO, 0, List.of(), 0), log)) {
            assertEquals(3, loaded.gpuLayers(), log.toString());
            assertTrue(loaded.model().placement().backends().stream().anyMatch(b -> b instanceof OpenClBackend),
                    loaded.model().placement().toString());
            assertTrue(loaded.model().placement().backends().stream().anyMatch(b -> b instanceof VectorBackend),
                    loaded.model().placement().toString());
            List<String> lines = log.toString().lines().filter(l -> l.contains("ran out")).toList();
            assertEquals(1, lines.size(), log.toString());
            assertTrue(lines.getFirst().startsWith("fs: opencl ("), lines.getFirst());
            assertTrue(lines.getFirst().contains(" ran out of memory: 4/4 layers need "), lines.getFirst());
            assertTrue(lines.getFirst().contains(": -ngl auto: 3/4 layers on opencl "), lines.getFirst());
            assertGeneratesTheGoldensTokens(loaded.state());
        }
    }

    /** The library says the same through FsModel.Options' gpuLayers, on a scheduler of two slots. */
    @Test
    void theLibraryFailsAFixedSplitAndRunsAnAutoOne() {
        FsModel.Options options = FsModel.Options.defaults().withBackend("opencl").withThreads(2)
                .withContextLength(CONTEXT).withParallelSlots(2);
        FsException e = assertThrows(FsException.class,
                () -> FsModel.load(GOLDEN.modelDir().toString(), options.withGpuLayers("3")));
        assertTrue(e.getMessage().startsWith("-ngl 3 does not fit opencl ("), e.getMessage());
        StringWriter log = new StringWriter();
        try (FsModel model = FsModel.load(GOLDEN.modelDir().toString(),
                options.withGpuLayers("auto").withLog(new PrintWriter(log, true)))) {
            assertTrue(log.toString().contains("fs: running on the CPU: opencl ("), log.toString());
            assertTrue(model.backendDescription().startsWith("cpu"), model.backendDescription());
        }
    }

    private static void assertGeneratesTheGoldensTokens(SingleSequence model) {
        int[] expected = GOLDEN.greedyGeneratedIds();
        Generator generator = new Generator(model, model.config().eosTokenIds().stream()
                .mapToInt(Integer::intValue).toArray(), SamplingParams.greedy());
        assertArrayEquals(expected, generator.generate(GOLDEN.greedyPromptIds(), expected.length, id -> {}).ids());
    }

    private static LoadedModel<SingleSequence> load(Offload offload, StringWriter log) {
        Engine.Options options = new Engine.Options(BackendChoice.OPENCL, null, 2, CONTEXT, "--ctx", KvCacheType.F32,
                KvCacheType.F32, offload, new PrintWriter(log, true));
        return Engine.load(Engine.open(GOLDEN.modelDir().toString(), new PrintWriter(log)), options,
                context -> (model, types) -> new SingleSequence(model, SingleSequence.Shape.forGeneration(context, 16),
                        types));
    }

    private static Golden load(String checkpoint) {
        try {
            return Golden.load(checkpoint);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
