package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * What the CPU backend runs when nothing is set, in both builds of fs-core (the pom passes which this is): with
 * libfscpu, the native kernels, the best variant this CPU runs; without it (-Dfs.native.cpu.skip, as on a machine
 * without a C compiler), the Vector API, and the one line that describes the backend says why.
 */
class DefaultKernelsTest {
    @Test
    void theDefaultIsNativeWhereTheLibraryWasBuiltAndTheVectorApiSayingWhyWhereNot() {
        CpuKernels kernels = CpuKernels.fromSettings(name -> null, name -> null);
        try (VectorBackend backend = new VectorBackend(2, kernels)) {
            if (Boolean.getBoolean("fs.native.cpu.skip")) {
                assertNull(kernels.nativeKernels());
                assertTrue(kernels.unavailable().startsWith("native kernels unavailable: fs-core was built without native CPU"
                        + " kernels for " + NativeLibrary.platform()),
                        kernels.unavailable());
                assertTrue(backend.description().startsWith("cpu (Vector API, 2 threads, "), backend.description());
                assertTrue(backend.description().endsWith("; " + kernels.unavailable() + ")"), backend.description());
            } else {
                assertNotNull(kernels.nativeKernels(), kernels.unavailable());
                String best = NativeKernels.best(NativeLibrary.load(NativeLibrary.bundled()));
                assertEquals(best, kernels.nativeKernels().isa());
                assertTrue(backend.description().startsWith("cpu (native " + best + " matmul, "),
                        backend.description());
            }
        }
    }
}
