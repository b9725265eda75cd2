package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The repacked weights' memory: each allocation zeroed, of its size, at its alignment, and apart from every other,
 * across chunks (one larger than a chunk among them).
 */
class HugePageMemoryTest {
    @Test
    void allocationsAreZeroedAlignedAndDisjointAcrossChunks() {
        long[] sizes = {100, 5L << 20, 70L << 20, 3, 60L << 20, 1L << 20};
        try (Arena arena = Arena.ofConfined()) {
            HugePageMemory memory = new HugePageMemory(arena);
            List<MemorySegment> segments = new ArrayList<>();
            for (long size : sizes) {
                MemorySegment s = memory.allocate(size, 64);
                assertEquals(size, s.byteSize());
                assertEquals(0, s.address() % 64, "64-byte aligned");
                assertEquals(0, s.get(ValueLayout.JAVA_BYTE, 0));
                assertEquals(0, s.get(ValueLayout.JAVA_BYTE, size - 1));
                s.set(ValueLayout.JAVA_BYTE, 0, (byte) segments.size());
                s.set(ValueLayout.JAVA_BYTE, size - 1, (byte) segments.size());
                segments.add(s);
            }
            for (int i = 0; i < segments.size(); i++) {
                MemorySegment s = segments.get(i);
                assertEquals((byte) i, s.get(ValueLayout.JAVA_BYTE, 0), "segment " + i + " kept its first byte");
                assertEquals((byte) i, s.get(ValueLayout.JAVA_BYTE, s.byteSize() - 1), "and its last");
                for (int j = 0; j < i; j++) {
                    MemorySegment t = segments.get(j);
                    boolean apart = s.address() + s.byteSize() <= t.address() || t.address() + t.byteSize() <= s.address();
                    assertTrue(apart, "segments " + j + " and " + i + " overlap");
                }
            }
        }
    }
}
