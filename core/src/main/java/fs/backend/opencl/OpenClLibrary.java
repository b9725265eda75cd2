package fs.backend.opencl;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Optional;

/**
 * Loads the platform's OpenCL library (the ICD loader) into this class loader, where the generated bindings
 * ({@code fs.opencl.bindings.opencl_h}, whose lookup is {@code SymbolLookup.loaderLookup()}) find its symbols.
 * A missing library or symbol is a reason string, never an exception: callers must not touch the bindings unless
 * {@link #failure()} is empty.
 */
@SuppressWarnings("restricted") // loading a native library is the point of this class
final class OpenClLibrary {
    /** Every OpenCL function the bindings expose (bindings/opencl.args); all of them are OpenCL 1.2 or older. */
    private static final List<String> FUNCTIONS = List.of(
            "clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo", "clCreateContext",
            "clReleaseContext", "clCreateCommandQueue", "clReleaseCommandQueue", "clCreateBuffer", "clReleaseMemObject",
            "clCreateProgramWithSource", "clBuildProgram", "clGetProgramBuildInfo", "clReleaseProgram", "clCreateKernel",
            "clReleaseKernel", "clSetKernelArg", "clGetKernelWorkGroupInfo", "clEnqueueNDRangeKernel",
            "clEnqueueWriteBuffer", "clEnqueueReadBuffer", "clEnqueueCopyBuffer", "clEnqueueFillBuffer",
            "clEnqueueMapBuffer", "clEnqueueUnmapMemObject", "clFinish", "clFlush");

    private static final Optional<String> FAILURE = load();

    private OpenClLibrary() {}

    /** Why OpenCL cannot be used, or empty when the library is loaded and has every function fs calls. */
    static Optional<String> failure() {
        return FAILURE;
    }

    private static Optional<String> load() {
        String os = System.getProperty("os.name", "");
        String library = os.startsWith("Windows") ? "OpenCL.dll"
                : os.startsWith("Mac") ? "/System/Library/Frameworks/OpenCL.framework/OpenCL" : "libOpenCL.so.1";
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            return Optional.of("no OpenCL library (" + library + " not found; install an OpenCL ICD loader and driver)");
        }
        for (String function : FUNCTIONS) {
            if (lookup.find(function).isEmpty()) {
                return Optional.of(library + " has no " + function + " (OpenCL 1.2 is required)");
            }
        }
        try {
            if (os.startsWith("Windows")) {
                System.loadLibrary("OpenCL");
            } else {
                System.load(pathOf(lookup.find("clGetPlatformIDs").orElseThrow(), library));
            }
        } catch (UnsatisfiedLinkError e) {
            return Optional.of("cannot load " + library + ": " + e.getMessage());
        }
        return Optional.empty();
    }

    /**
     * The file that defines {@code symbol}: dlopen found the library by its soname (LD_LIBRARY_PATH, ld.so.cache),
     * but System.load needs an absolute path, so ask dladdr where the symbol lives.
     */
    private static String pathOf(MemorySegment symbol, String library) {
        Linker linker = Linker.nativeLinker();
        MemorySegment dladdr = linker.defaultLookup().find("dladdr")
                .orElseThrow(() -> new UnsatisfiedLinkError("no dladdr to locate " + library));
        AddressLayout pointer = ValueLayout.ADDRESS.withTargetLayout(
                MemoryLayout.sequenceLayout(Long.MAX_VALUE, ValueLayout.JAVA_BYTE));
        StructLayout info = MemoryLayout.structLayout(
                pointer.withName("dli_fname"), ValueLayout.ADDRESS.withName("dli_fbase"),
                ValueLayout.ADDRESS.withName("dli_sname"), ValueLayout.ADDRESS.withName("dli_saddr"));
        MethodHandle handle = linker.downcallHandle(dladdr,
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment result = arena.allocate(info);
            int found = (int) handle.invokeExact(symbol, result);
            MemorySegment name = result.get(pointer, 0);
            if (found == 0 || name.equals(MemorySegment.NULL)) {
                throw new UnsatisfiedLinkError("dladdr cannot locate " + library);
            }
            return name.getString(0);
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }
}
