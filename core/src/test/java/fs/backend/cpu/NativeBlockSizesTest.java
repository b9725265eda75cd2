package fs.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import fs.FsException;
import fs.tensor.DType;
import fs.tensor.FormatSources;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * libfscpu's weight blocks are the sizes fs's formats give them (blocks.h against {@link DType#blockBytes()}), and a
 * library whose sizes differ, or that cannot say, is refused when bound, with one line.
 */
class NativeBlockSizesTest {
    private static final SymbolLookup LIBRARY = NativeLibrary.load(NativeLibrary.bundled());
    private static final Linker LINKER = Linker.nativeLinker();
    private static final FunctionDescriptor SIZE_OF = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS);

    @Test
    void everyWeightFormatHasTheBlockBytesOfItsDType() throws Throwable {
        MethodHandle blockBytes = LINKER.downcallHandle(LIBRARY.find("fs_block_bytes").orElseThrow(), SIZE_OF);
        try (Arena arena = Arena.ofConfined()) {
            for (DType format : FormatSources.weights()) {
                assertEquals(format.blockBytes(), (int) blockBytes.invokeExact(arena.allocateFrom(format.kernelName())),
                        format.toString());
            }
            assertEquals(0, (int) blockBytes.invokeExact(arena.allocateFrom("f64")), "not a native format");
        }
    }

    @Test
    void aLibraryWithOtherBlockSizesIsRefused() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MethodHandle oneByte = MethodHandles.lookup().findStatic(NativeBlockSizesTest.class, "oneByte",
                    MethodType.methodType(int.class, MemorySegment.class));
            MemorySegment stub = LINKER.upcallStub(oneByte, SIZE_OF, arena);
            SymbolLookup otherBuild = name -> name.equals("fs_block_bytes") ? Optional.of(stub) : LIBRARY.find(name);
            DType first = Arrays.stream(DType.values()).filter(NativeKernels::covers).findFirst().orElseThrow();
            FsException e = assertThrows(FsException.class, () -> NativeKernels.bind(otherBuild, "scalar"));
            assertEquals("the native CPU kernels' " + first + " blocks are 1 bytes, fs's " + first.blockBytes()
                    + " (a library from another build?)", e.getMessage());
        }
    }

    @Test
    void aLibraryWithoutBlockSizesIsRefused() {
        SymbolLookup older = name -> name.equals("fs_block_bytes") ? Optional.empty() : LIBRARY.find(name);
        FsException e = assertThrows(FsException.class, () -> NativeKernels.bind(older, "scalar"));
        assertEquals("the native CPU kernels have no fs_block_bytes (a library from another build?)", e.getMessage());
    }

    @Test
    void theBundledLibraryBinds() {
        assertEquals("scalar", NativeKernels.bind(LIBRARY, "scalar").isa());
    }

    /** A block size no format has. */
    private static int oneByte(MemorySegment format) {
        return 1;
    }
}
