package fs.cli;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * Gives the process its real stderr back. The JVM prints "WARNING: Using incubator modules: jdk.incubator.vector" on
 * fd 2 before main, and no flag silences it; so ./fs starts the JVM with fd 2 on /dev/null and the real stderr on
 * another descriptor (named by the fs.stderr.fd property), and the first thing main does is move it back to fd 2.
 * From then on every byte on fd 2, Java's System.err and the JVM's own messages alike, reaches the user's terminal
 * as it would without the launcher: a terminal stays a terminal (prompts, progress bars), a pipe stays a pipe.
 */
final class LauncherStderr {
    private LauncherStderr() {}

    /** Moves the descriptor the launcher saved back to fd 2; does nothing when not started by the launcher. */
    static void restore() {
        String saved = System.getProperty("fs.stderr.fd");
        if (saved == null) return;
        int fd;
        try {
            fd = Integer.parseInt(saved);
        } catch (NumberFormatException e) {
            return;
        }
        if (fd <= 2) return;
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle dup2 = linker.downcallHandle(linker.defaultLookup().find("dup2").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
            MethodHandle close = linker.downcallHandle(linker.defaultLookup().find("close").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT));
            // Only a successful dup2 may close the saved descriptor: else it is the only way to the user's stderr.
            if ((int) dup2.invokeExact(fd, 2) == 2) {
                int unused = (int) close.invokeExact(fd); // invokeExact must be given the int it returns
            }
        } catch (Throwable e) {
            // No libc to call: stderr stays where the launcher put it, and fs still runs.
        }
    }
}
