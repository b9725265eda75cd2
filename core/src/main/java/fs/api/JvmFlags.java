package fs.api;

import fs.FsException;

/**
 * The JVM flag fs cannot run without. Its CPU kernels are written against the incubating Vector API, whose module a
 * JVM resolves only when told to: without it the first kernel class to load would fail as a NoClassDefFoundError
 * deep inside loading a model, which names a class and not the flag.
 */
final class JvmFlags {
    static final String MISSING_VECTOR_MODULE = "fs needs the JVM flag --add-modules jdk.incubator.vector (and "
            + "--enable-native-access=ALL-UNNAMED, to call OpenCL without the JDK's warning)";

    private JvmFlags() {}

    /** @throws FsException when the JVM was started without {@code --add-modules jdk.incubator.vector} */
    static void requireVectorModule() {
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            throw new FsException(MISSING_VECTOR_MODULE);
        }
    }
}
