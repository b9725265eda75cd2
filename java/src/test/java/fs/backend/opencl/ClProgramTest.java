package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import org.junit.jupiter.api.Test;

class ClProgramTest {
    @Test
    void kernelFilesGetTheirSharedHeaderInlined() {
        for (String file : new String[] {"weights.cl", "activations.cl"}) {
            String source = ClProgram.source(file);
            assertFalse(source.lines().anyMatch(line -> line.strip().startsWith("#include")), file);
            assertEquals(1, source.split("static float local_sum\\(", -1).length - 1, file);
            assertTrue(source.contains("__kernel"), file);
        }
    }

    @Test
    void aMissingKernelFileIsOneClearError() {
        FsException e = assertThrows(FsException.class, () -> ClProgram.source("nope.cl"));
        assertEquals("OpenCL kernel source /kernels/nope.cl is missing from the classpath", e.getMessage());
    }
}
