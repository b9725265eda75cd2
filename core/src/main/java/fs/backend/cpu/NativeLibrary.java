package fs.backend.cpu;

import fs.FsException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds and loads libfscpu (native/cpu), the native CPU kernels. fs-core's build puts it in its classes as
 * {@code native/<os>-<arch>/libfscpu.so} (os and arch named as CMake names them); from a classes directory it is
 * loaded where it lies, from a jar it is first copied into the cache ($FS_CACHE_DIR, else $XDG_CACHE_HOME/fs, else
 * ~/.cache/fs), under {@code native/} in a folder named by a hash of its bytes, so two builds never share a file.
 * A library is loaded once per JVM and never unloaded.
 */
@SuppressWarnings("restricted") // loading a native library is the point of this class
final class NativeLibrary {
    private static final Map<Path, SymbolLookup> LOADED = new ConcurrentHashMap<>();

    private NativeLibrary() {}

    /** {@code <os>-<arch>} of this JVM, as CMake's CMAKE_SYSTEM_NAME (lower case) and processor name it. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        if (os.startsWith("mac")) os = "darwin";
        else if (os.startsWith("windows")) os = "windows";
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        arch = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return os + "-" + arch;
    }

    /** The library fs-core was built with, as a file: its class-path resource, extracted from a jar if need be. */
    static Path bundled() {
        String resource = "native/" + platform() + "/" + System.mapLibraryName("fscpu");
        URL url = NativeLibrary.class.getClassLoader().getResource(resource);
        if (url == null) {
            throw new FsException("fs-core was built without native CPU kernels for " + platform()
                    + " (no CMake or C compiler at build time, or no such platform)");
        }
        if (url.getProtocol().equals("file")) {
            try {
                return Path.of(url.toURI());
            } catch (URISyntaxException e) {
                throw new FsException("cannot read the native CPU kernels at " + url + ": " + e.getMessage());
            }
        }
        return extract(url, cacheDir().resolve("native"));
    }

    private static Path cacheDir() {
        String explicit = System.getenv("FS_CACHE_DIR");
        if (explicit != null && !explicit.isEmpty()) return Path.of(explicit);
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isEmpty()) return Path.of(xdg, "fs");
        return Path.of(System.getProperty("user.home"), ".cache", "fs");
    }

    /**
     * The library at {@code url} as a file under {@code dir}: written to a temporary name and moved into place, so
     * a JVM starting at the same time sees the whole file or none.
     */
    static Path extract(URL url, Path dir) {
        byte[] bytes;
        try (InputStream in = url.openStream()) {
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new FsException("cannot read the native CPU kernels at " + url + ": " + e.getMessage());
        }
        String name = url.getPath().substring(url.getPath().lastIndexOf('/') + 1);
        Path target = dir.resolve(sha256(bytes).substring(0, 16)).resolve(name);
        try {
            if (Files.isRegularFile(target) && Files.size(target) == bytes.length) return target;
            Files.createDirectories(target.getParent());
            Path temporary = Files.createTempFile(target.getParent(), name, ".part");
            Files.write(temporary, bytes);
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new FsException("cannot write the native CPU kernels to " + target.getParent() + ": " + e);
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError("every JVM has SHA-256", e);
        }
    }

    /** The symbols of the library file {@code path}, loaded the first time. */
    static SymbolLookup load(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        if (!Files.isRegularFile(absolute)) throw new FsException("no native CPU kernels at " + absolute);
        return LOADED.computeIfAbsent(absolute, p -> {
            try {
                return SymbolLookup.libraryLookup(p, Arena.global());
            } catch (IllegalArgumentException e) {
                throw new FsException("cannot load the native CPU kernels at " + p + ": " + e.getMessage());
            }
        });
    }
}
