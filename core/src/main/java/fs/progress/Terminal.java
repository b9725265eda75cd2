package fs.progress;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/** What fs asks about the terminal before drawing a progress bar in place. */
public final class Terminal {
    private Terminal() {}

    /** Whether file descriptor 2 is a terminal (isatty); false where that cannot be asked. */
    public static boolean stderrIsTerminal() {
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle isatty = linker.downcallHandle(
                    linker.defaultLookup().find("isatty").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
            return (int) isatty.invokeExact(2) == 1;
        } catch (Throwable e) {
            return false;
        }
    }
}
