package fs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.model.Golden;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The one load: the context default, the context check, the caller's allocation on the loaded backend. */
class EngineTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    private static Engine.Options options(BackendChoice backend, Integer contextLength, StringWriter log) {
        return new Engine.Options(backend, null, 2, contextLength, "--ctx", null, null, new PrintWriter(log, true));
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
            assertSame(loaded.backend(), loaded.state().backend());
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
