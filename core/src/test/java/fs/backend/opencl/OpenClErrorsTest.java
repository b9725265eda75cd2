package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import org.junit.jupiter.api.Test;

/** Failures the user sees: named CL status codes, kernel build logs, and a model too large for the device. */
class OpenClErrorsTest {
    @Test
    void statusCodesAreNamed() {
        assertEquals("CL_OUT_OF_RESOURCES (-5)", ClStatus.describe(-5));
        assertEquals("CL_INVALID_KERNEL_ARGS (-52)", ClStatus.describe(-52));
        assertEquals("CL_PLATFORM_NOT_FOUND_KHR (-1001)", ClStatus.describe(-1001));
        assertEquals("OpenCL error -9999", ClStatus.describe(-9999));
        FsException e = assertThrows(FsException.class, () -> ClStatus.check(-4, "clCreateBuffer(x)"));
        assertEquals("OpenCL clCreateBuffer(x) failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)", e.getMessage());
    }

    @Test
    void buildFailureQuotesTheBuildLog() {
        DeviceContext context = DeviceContext.of(OpenClTestSupport.device());
        String source = "__kernel void broken(__global float* x) {\n  x[0] = undeclared_thing;\n}\n";
        FsException e = assertThrows(FsException.class, () -> QuietNativeStderr.during(
                () -> ClProgram.build(context.context, context.deviceId, "broken.cl", source, "-cl-std=CL1.2")));
        assertTrue(e.getMessage().startsWith("OpenCL build of broken.cl (-cl-std=CL1.2) failed with "
                + "CL_BUILD_PROGRAM_FAILURE (-11): "), e.getMessage());
        assertTrue(e.getMessage().contains("undeclared_thing"), "the build log names the error: " + e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), "one line");
    }

    @Test
    void deviceMemoryRefusesWhatDoesNotFitWithTheNumbers() {
        long mib = 1L << 20;
        DeviceMemory memory = new DeviceMemory("Tiny GPU", 1000 * mib, 300 * mib);
        FsException tooBig = assertThrows(FsException.class,
                () -> memory.reserve("model.embed_tokens.weight", 311 * mib));
        assertEquals("model.embed_tokens.weight needs 311 MiB in one buffer but Tiny GPU allows at most 300 MiB"
                + " (CL_DEVICE_MAX_MEM_ALLOC_SIZE); use --backend cpu", tooBig.getMessage());
        for (int i = 0; i < 4; i++) {
            int layer = i;
            assertDoesNotThrow(() -> memory.reserve("layer " + layer, 240 * mib));
        }
        FsException full = assertThrows(FsException.class, () -> memory.reserve("lm_head.weight", 100 * mib));
        assertEquals("the model does not fit on Tiny GPU: lm_head.weight (100 MiB) would bring device memory in use"
                + " to 1.04 GiB, more than its 1000 MiB (CL_DEVICE_GLOBAL_MEM_SIZE): offload fewer layers (-ngl), or"
                + " use --backend cpu, a smaller model or a shorter --ctx", full.getMessage());
        assertEquals(960 * mib, memory.reserved());
    }
}
