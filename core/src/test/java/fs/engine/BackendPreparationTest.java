package fs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.model.Golden;
import fs.model.SingleSequence;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/** The backend prepared on a thread of its own while the model opens: the same backend, the same errors. */
class BackendPreparationTest {
    private static final String MODEL = Golden.modelDir("tiny-tied").toString();

    private static Engine.Options cpu(Integer device) {
        return new Engine.Options(BackendChoice.CPU, device, 2, 16, "--ctx", null, null, null,
                new PrintWriter(new StringWriter(), true));
    }

    private static IntFunction<Engine.Allocation<SingleSequence>> oneSequence() {
        return context -> (model, cacheTypes) ->
                new SingleSequence(model, SingleSequence.Shape.forGeneration(context, 4), cacheTypes);
    }

    @Test
    void aModelLoadedWithAStartedPreparationIsOnTheBackendItWouldHaveBeenOnWithout() {
        String prepared;
        try (var loaded = Engine.load(Engine.open(MODEL, new PrintWriter(new StringWriter())), cpu(null),
                BackendPreparation.start(BackendChoice.CPU, null), oneSequence())) {
            prepared = loaded.description();
        }
        try (var loaded = Engine.load(Engine.open(MODEL, new PrintWriter(new StringWriter())), cpu(null),
                oneSequence())) {
            assertEquals(loaded.description(), prepared);
        }
    }

    @Test
    void whatPreparingThrewIsThrownWhenTheKernelsAreTakenAndSettlingThrowsNothing() {
        System.setProperty("fs.cpu.kernels", "bogus");
        try {
            BackendPreparation preparation = BackendPreparation.start(BackendChoice.CPU, null);
            preparation.settle();
            FsException e = assertThrows(FsException.class, preparation::cpuKernels);
            assertEquals("fs.cpu.kernels=bogus is unknown; choose native or java", e.getMessage());
        } finally {
            System.clearProperty("fs.cpu.kernels");
        }
    }

    @Test
    void aPreparationForAnotherBackendOrDeviceIsRefused() {
        for (BackendPreparation other : new BackendPreparation[] {BackendPreparation.start(BackendChoice.JAVA, null),
                BackendPreparation.whenAsked(BackendChoice.CPU, 1)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Engine.load(
                    Engine.open(MODEL, new PrintWriter(new StringWriter())), cpu(null), other, oneSequence()));
            assertTrue(e.getMessage().contains("another backend"), e.getMessage());
        }
    }
}
