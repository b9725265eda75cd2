package fs;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.LocationProvider;
import com.tngtech.archunit.lang.ArchRule;
import java.net.URISyntaxException;
import java.util.Set;

/**
 * The arrows between fs-core's packages, read from its compiled classes (not its tests, nor fs-bindings' classes,
 * which share the {@code fs} prefix): no package cycle, and none of the arrows the design forbids.
 */
@AnalyzeClasses(locations = LayeringTest.CoreClasses.class)
class LayeringTest {
    /** Where fs-core's own classes are: the folder or jar {@link FsException} was loaded from. */
    static final class CoreClasses implements LocationProvider {
        @Override
        public Set<Location> get(Class<?> testClass) {
            try {
                return Set.of(Location.of(FsException.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Every package is a slice of its own (fs.backend and fs.backend.cpu apart), the root package included. */
    @ArchTest
    static final ArchRule noPackageCycles = slices().matching("(**)").should().beFreeOfCycles();

    /** A backend runs ops on weights and buffers; what a model is, is the model's business. */
    @ArchTest
    static final ArchRule backendsKnowNoModel = noClasses().that().resideInAPackage("fs.backend..")
            .should().dependOnClassesThat().resideInAPackage("fs.model..");

    /** The file readers hand out tensors; which backend they end up on is decided above them. */
    @ArchTest
    static final ArchRule fileReadersKnowNoBackend = noClasses().that().resideInAnyPackage("fs.gguf..", "fs.safetensors..")
            .should().dependOnClassesThat().resideInAPackage("fs.backend..");

    /** The formats are at the bottom: backends, readers and tools ask them, they ask only DType. */
    @ArchTest
    static final ArchRule formatsAreAtTheBottom = classes().that().resideInAPackage("fs.format..")
            .should().onlyDependOnClassesThat().resideInAnyPackage("fs", "fs.format..", "fs.tensor..", "java..");

    /** Grammars constrain token choices: they know tokens and text, never how a model or a backend computes logits. */
    @ArchTest
    static final ArchRule grammarsKnowNoModelNorBackend = noClasses().that().resideInAPackage("fs.grammar..")
            .should().dependOnClassesThat().resideInAnyPackage("fs.model..", "fs.backend..", "fs.engine..", "fs.api..");

    /** The core is a library: the command line (picocli, JLine) and the HTTP server live in fs-cli and fs-server. */
    @ArchTest
    static final ArchRule coreKnowsNoTerminalHttpServerOrPicocli = noClasses()
            .should().dependOnClassesThat().resideInAnyPackage("picocli..", "org.jline..", "com.sun.net.httpserver..",
                    "org.eclipse.jetty..", "io.helidon..", "jakarta.servlet..");
}
