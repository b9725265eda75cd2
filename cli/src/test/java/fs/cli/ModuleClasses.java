package fs.cli;

import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.LocationProvider;
import fs.FsException;
import fs.langchain4j.FsChatModel;
import fs.server.ApiServer;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Where the compiled classes of fs-core, fs-server, fs-langchain4j, fs-spring-ai and fs-cli are (a jar, or a classes folder when the
 * reactor has not packaged a module yet): the folder or jar one class of each was loaded from. Their tests' classes
 * and fs-bindings' (which share the {@code fs} prefix) are not among them. fs-spring-ai's comes without Spring (see
 * the pom): its class here is one that loads without it.
 */
final class ModuleClasses implements LocationProvider {
    /** The five modules' classes, fs-core first. */
    static List<Path> paths() {
        return List.of(FsException.class, ApiServer.class, FsChatModel.class, fs.springai.FsProperties.class,
                        Main.class).stream()
                .map(ModuleClasses::origin).toList();
    }

    private static Path origin(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public Set<Location> get(Class<?> testClass) {
        return paths().stream().map(ModuleClasses::location).collect(Collectors.toSet());
    }

    /** ArchUnit reads a jar only by a jar: URI (a file: URI to one is taken for a folder, and gives no classes). */
    private static Location location(Path classes) {
        return Files.isDirectory(classes) ? Location.of(classes) : Location.of(URI.create("jar:" + classes.toUri() + "!/"));
    }
}
