package fs.backend.cpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Zero-filled memory from the C library's calloc. Arena.allocate writes every byte, which for a KV cache of 4096
 * positions (940 MB for Qwen3-0.6B) cost half a second at every start; calloc's large blocks come from the OS as
 * zero pages that cost nothing until the cache reaches them.
 */
final class LazyZeroMemory {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle CALLOC = LINKER.downcallHandle(
            LINKER.defaultLookup().find("calloc").orElseThrow(), FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle FREE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("free").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS));

    private LazyZeroMemory() {}

    /** {@code bytes} of zeros, freed when {@code arena} closes. */
    static MemorySegment allocate(long bytes, Arena arena) {
        MemorySegment block;
        try {
            block = (MemorySegment) CALLOC.invokeExact(1L, bytes);
        } catch (Throwable e) {
            throw new IllegalStateException("calloc failed", e);
        }
        if (block.equals(MemorySegment.NULL)) throw new OutOfMemoryError("calloc of " + bytes + " bytes failed");
        return block.reinterpret(bytes, arena, LazyZeroMemory::free);
    }

    private static void free(MemorySegment block) {
        try {
            FREE.invokeExact(block);
        } catch (Throwable e) {
            throw new IllegalStateException("free failed", e);
        }
    }
}
