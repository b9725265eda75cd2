package fs.backend.cpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.invoke.MethodHandle;

/**
 * Zero-filled memory for repacked weights in chunks that Linux backs with transparent huge pages where it can
 * (madvise MADV_HUGEPAGE on 2 MiB-aligned chunks of 64 MiB or more, freed when the arena closes), the weights taken
 * from them one after another: each weight of Qwen3-0.6B is under 2 MiB, so they share chunks. Why: in 4 KiB pages
 * the repacked weights cost a page fault per page when written at load and TLB misses when decode streams them all
 * every token. Measured on Qwen3-0.6B Q4_K_M and Q4_0 (2 threads, a loaded 2-core machine): the upload's CPU time
 * 1.4-1.7 s to 0.8 s, and fs bench tg32 with repacking on against off from about 0.7x to about 1x. Where the advice
 * is refused (THP off, another OS) the memory is plain pages, as calloc gives them.
 */
final class HugePageMemory implements SegmentAllocator {
    private static final long HUGE_PAGE = 2L << 20;
    private static final long CHUNK = 64L << 20;
    private static final int MADV_HUGEPAGE = 14;
    private static final MethodHandle MADVISE = NativeLibrary.platform().startsWith("linux-")
            ? Linker.nativeLinker().downcallHandle(Linker.nativeLinker().defaultLookup().find("madvise").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT))
            : null;

    private final Arena arena;
    private MemorySegment chunk = MemorySegment.NULL;
    private long used;

    HugePageMemory(Arena arena) {
        this.arena = arena;
    }

    @Override
    public MemorySegment allocate(long bytes, long alignment) {
        long start = ((chunk.address() + used + alignment - 1) & -alignment) - chunk.address();
        if (start + bytes > chunk.byteSize()) {
            chunk = newChunk(Math.max(CHUNK, (bytes + HUGE_PAGE - 1) & -HUGE_PAGE));
            start = 0;
        }
        used = start + bytes;
        return chunk.asSlice(start, bytes);
    }

    private MemorySegment newChunk(long bytes) {
        MemorySegment block = LazyZeroMemory.allocate(bytes + HUGE_PAGE, arena);
        MemorySegment aligned = block.asSlice(-block.address() & (HUGE_PAGE - 1), bytes);
        if (MADVISE != null) {
            try {
                int ignored = (int) MADVISE.invokeExact(aligned, bytes, MADV_HUGEPAGE); // refused: plain pages
            } catch (Throwable e) {
                throw new IllegalStateException("madvise failed", e);
            }
        }
        return aligned;
    }
}
