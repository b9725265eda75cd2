package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClProgramTest {
    @Test
    void kernelFilesGetTheirSharedHeaderInlined() {
        for (String file : new String[] {"weights.cl", "kv_cache.cl", "blocks.cl"}) {
            String source = ClProgram.source(file);
            assertFalse(source.lines().anyMatch(line -> line.strip().startsWith("#include")), file);
            assertEquals(1, source.split("static float local_sum\\(", -1).length - 1, file);
            assertTrue(source.contains("__kernel"), file);
        }
    }

    /**
     * A block format's program is its header and blocks.cl, one after the other; a header that several files include
     * is inlined in each (its guard drops the repeats): Q4_K's and Q5_K's both include piece.h and k_scales.h.
     */
    @Test
    void aHeaderIncludedFromSeveralFilesIsInlinedInEach() {
        String source = ClProgram.source(List.of("q4_k.h", "q5_k.h", "blocks.cl"));
        assertFalse(source.lines().anyMatch(line -> line.strip().startsWith("#include")));
        assertEquals(2, source.split("#define FS_PIECE_H", -1).length - 1);
        assertEquals(2, source.split("#define FS_K_SCALES_H", -1).length - 1);
        assertEquals(1, source.split("static float local_sum\\(", -1).length - 1);
    }

    @Test
    void anIncludeCycleIsOneClearError() {
        FsException e = assertThrows(FsException.class, () -> ClProgram.source("cycle_a.h"));
        assertEquals("OpenCL kernel source /kernels/cycle_a.h includes itself (through cycle_a.h, cycle_b.h)",
                e.getMessage());
    }

    @Test
    void aMissingKernelFileIsOneClearError() {
        FsException e = assertThrows(FsException.class, () -> ClProgram.source("nope.cl"));
        assertEquals("OpenCL kernel source /kernels/nope.cl is missing from the classpath", e.getMessage());
    }
}
