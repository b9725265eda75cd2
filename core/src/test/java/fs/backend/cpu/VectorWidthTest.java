package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

/**
 * The width the CPU kernels run at in this JVM. The build runs the CPU path's tests again with -XX:UseAVX=2 and
 * -XX:MaxVectorSize=16 (core/pom.xml), passing the flag and the widest vector it allows: a flag that did not take
 * effect would test the native width twice and the narrow ones never.
 */
class VectorWidthTest {
    @Test
    void theKernelsRunAtTheWidthThisJvmWasGiven() {
        int lanes = MatmulKernels.L;
        assertEquals(FloatVector.SPECIES_PREFERRED.length(), lanes, "the matmul kernels' width");
        assertEquals(lanes, QuantBlocks.L, "the block formats' chunk");
        assertTrue(lanes == 4 || lanes == 8 || lanes == 16, "a float vector of 4, 8 or 16 lanes: " + lanes);
        String flag = System.getProperty("fs.vector.flag", "the machine's own width");
        String maxBits = System.getProperty("fs.vector.max.bits");
        if (maxBits != null) {
            assertTrue(32 * lanes <= Integer.parseInt(maxBits), flag + " allows " + maxBits + " bits, got " + lanes + " lanes");
        }
        System.out.println("fs-core CPU path at " + flag + ": " + lanes + " float lanes");
    }
}
