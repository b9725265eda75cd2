package fs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.model.Golden;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The one load: the context default, the context check, the cache types' default and check, the caller's allocation on
 * the loaded backend.
 */
class EngineTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    private static Engine.Options options(BackendChoice backend, Integer contextLength, StringWriter log) {
        return options(backend, null, null, contextLength, log);
    }

    private static Engine.Options options(BackendChoice backend, KvCacheType keys, KvCacheType values,
                                          Integer contextLength, StringWriter log) {
        return new Engine.Options(backend, null, 2, contextLength, "--ctx", keys, values, null,
                new PrintWriter(log, true));
    }

    private static Engine.Options cacheTypes(BackendChoice backend, KvCacheType keys, KvCacheType values) {
        return options(backend, keys, values, null, new StringWriter());
    }

    @Test
    void theCacheIsF16AsLlamaCppsByDefaultButF32OnTheExactJavaPath() {
        for (BackendChoice choice : List.of(BackendChoice.AUTO, BackendChoice.CPU, BackendChoice.OPENCL)) {
            assertEquals(KvCacheTypes.F16, Engine.cacheTypes(cacheTypes(choice, null, null)), choice.spelling());
        }
        assertEquals(KvCacheTypes.F32, Engine.cacheTypes(cacheTypes(BackendChoice.JAVA, null, null)));
    }

    @Test
    void aNamedTypeIsHonouredAndTheOtherKeepsItsDefault() {
        assertEquals(KvCacheTypes.F32,
                Engine.cacheTypes(cacheTypes(BackendChoice.CPU, KvCacheType.F32, KvCacheType.F32)));
        assertEquals(new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F16),
                Engine.cacheTypes(cacheTypes(BackendChoice.CPU, KvCacheType.Q8_0, null)));
        assertEquals(new KvCacheTypes(KvCacheType.F32, KvCacheType.BF16),
                Engine.cacheTypes(cacheTypes(BackendChoice.JAVA, null, KvCacheType.BF16)));
    }

    @Test
    void theCallersCacheHasTheTypesTheEngineSettledOnForItsBackend() {
        try (LoadedModel<SingleSequence> loaded = Engine.load(Engine.open(MODEL, new PrintWriter(new StringWriter())),
                options(BackendChoice.JAVA, 16, new StringWriter()), context -> (model, cacheTypes) ->
                        new SingleSequence(model, SingleSequence.Shape.forGeneration(context, 4), cacheTypes))) {
            assertEquals(KvCacheTypes.F32, loaded.cacheTypes());
            assertEquals(KvCacheTypes.F32, loaded.state().cacheTypes());
            // tiny-tied: 2 layers × 2 kv heads × (16 + 16) floats of 4 bytes
            assertEquals(2 * 2 * (16 + 16) * 4, loaded.cacheBytesPerPosition());
        }
        try (LoadedModel<SingleSequence> loaded = Engine.load(Engine.open(MODEL, new PrintWriter(new StringWriter())),
                options(BackendChoice.CPU, 16, new StringWriter()), context -> (model, cacheTypes) ->
                        new SingleSequence(model, SingleSequence.Shape.forGeneration(context, 4), cacheTypes))) {
            KvCacheTypes expected = loaded.model().placement().output().kvCacheTypes().contains(KvCacheType.F16)
                    ? KvCacheTypes.F16 : KvCacheTypes.F32;
            assertEquals(expected, loaded.cacheTypes());
            assertEquals(expected, loaded.state().cacheTypes());
        }
    }

    @Test
    void aQ8CacheOnHeadsThatAreNotWholeBlocksIsRefusedBeforeAnyBackendIsMade() {
        StringWriter log = new StringWriter();
        FsException e = assertThrows(FsException.class, () -> Engine.load(
                Engine.open(MODEL, new PrintWriter(new StringWriter())),
                options(BackendChoice.AUTO, null, KvCacheType.Q8_0, 16, log), context -> (model, cacheTypes) -> 0));
        assertEquals("a q8_0 KV cache needs a head dimension that is a multiple of 32; this model's is 16 (use f32, "
                + "f16 or bf16)", e.getMessage());
        assertEquals("", log.toString());
    }

    @Test
    void withoutAContextLengthTheModelsUpTo4096IsWhatTheCallerSizesFor() {
        List<Integer> sizedFor = new ArrayList<>();
        try (LoadedModel<SingleSequence> loaded = Engine.load(Engine.open(MODEL, new PrintWriter(new StringWriter())),
                options(BackendChoice.JAVA, null, new StringWriter()), context -> {
                    sizedFor.add(context);
                    return (model, cacheTypes) -> new SingleSequence(model, new SingleSequence.Shape(context, 1, 1),
                            cacheTypes);
                })) {
            int expected = Math.min(loaded.config().maxPositionEmbeddings(), 4096);
            assertEquals(List.of(expected), sizedFor);
            assertEquals(expected, loaded.contextLength());
            assertEquals(expected, Engine.defaultContextLength(loaded.config()));
            assertEquals(expected, loaded.state().shape().contextLength());
            assertSame(loaded.model(), loaded.state().model(), "the caller's sequence is on the loaded model");
        }
    }

    @Test
    void aGivenContextLengthIsUsedWhenTheModelAllowsItAndNamedBySettingWhenNot() {
        try (LoadedModel<Integer> loaded = Engine.load(Engine.open(MODEL, new PrintWriter(new StringWriter())),
                options(BackendChoice.CPU, 100, new StringWriter()), context -> (model, cacheTypes) -> context)) {
            assertEquals(100, loaded.contextLength());
            assertEquals(100, loaded.state());
        }
        ModelSource source = Engine.open(MODEL, new PrintWriter(new StringWriter()));
        int max = source.config().maxPositionEmbeddings();
        for (int context : new int[] {0, max + 1}) {
            FsException e = assertThrows(FsException.class, () -> Engine.load(
                    Engine.open(MODEL, new PrintWriter(new StringWriter())),
                    options(BackendChoice.CPU, context, new StringWriter()), c -> (model, cacheTypes) -> c));
            assertEquals("--ctx " + context + " is out of range: this model allows 1.." + max + " positions",
                    e.getMessage());
        }
        source.close();
    }

    @Test
    void whatTheCallersSizingThrowsComesOutBeforeAnyBackendIsMade() {
        StringWriter log = new StringWriter();
        FsException e = assertThrows(FsException.class, () -> Engine.load(
                Engine.open(MODEL, new PrintWriter(new StringWriter())), options(BackendChoice.AUTO, 8, log),
                context -> {
                    throw new FsException("too small: " + context);
                }));
        assertEquals("too small: 8", e.getMessage());
        // auto says on the log which backend it fell back to once it makes one: nothing was made.
        assertEquals("", log.toString());
    }

    @Test
    void theBackendChoicesAreSpelledAsTheCommandLineSpellsThem() {
        assertEquals("auto, cpu, java, opencl", BackendChoice.SPELLINGS);
        for (BackendChoice choice : BackendChoice.values()) {
            assertEquals(Optional.of(choice), BackendChoice.named(choice.spelling()));
        }
        assertTrue(BackendChoice.named("gpu").isEmpty());
        assertTrue(BackendChoice.named("CPU").isEmpty(), "exactly as --backend takes it");
    }
}
