package fs.backend.opencl;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.function.Supplier;

/**
 * Runs a call with the process's native stderr (fd 2) on /dev/null: an OpenCL compiler (PoCL's clang) prints its
 * diagnostics there itself, and a build that a test breaks on purpose would put "1 error generated." in the test log,
 * where it reads as a failure. The build log the test checks comes back through OpenCL, not through fd 2.
 */
final class QuietNativeStderr {
    private static final int STDERR = 2;
    private static final int O_WRONLY = 1;

    private QuietNativeStderr() {}

    static <T> T during(Supplier<T> call) {
        Linker linker = Linker.nativeLinker();
        MethodHandle dup = function(linker, "dup", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        MethodHandle dup2 = function(linker, "dup2",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        MethodHandle close = function(linker, "close", FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
        MethodHandle open = linker.downcallHandle(linker.defaultLookup().find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
                Linker.Option.firstVariadicArg(2));
        try (Arena arena = Arena.ofConfined()) {
            System.err.flush();
            int saved = (int) dup.invokeExact(STDERR);
            int devNull = (int) open.invokeExact(arena.allocateFrom("/dev/null"), O_WRONLY);
            if (saved < 0 || devNull < 0 || (int) dup2.invokeExact(devNull, STDERR) < 0) {
                throw new IllegalStateException("cannot put fd 2 on /dev/null");
            }
            close.invokeExact(devNull);
            try {
                return call.get();
            } finally {
                if ((int) dup2.invokeExact(saved, STDERR) < 0) throw new IllegalStateException("cannot restore fd 2");
                close.invokeExact(saved);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private static MethodHandle function(Linker linker, String name, FunctionDescriptor descriptor) {
        return linker.downcallHandle(linker.defaultLookup().find(name).orElseThrow(), descriptor);
    }
}
