package fs.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The arrows between the modules, read from their compiled classes together: no package cycle across them, and none
 * of the arrows the design forbids. Each module outside the core is one package (fs-server is fs.server,
 * fs-langchain4j fs.langchain4j, fs-spring-ai fs.springai, fs-cli fs.cli); fs-core's own rules are its LayeringTest.
 */
@AnalyzeClasses(locations = ModuleClasses.class)
class ModuleLayeringTest {
    private static final String[] ABOVE_THE_CORE = {"fs.server..", "fs.langchain4j..", "fs.springai..", "fs.cli.."};
    private static final String[] TERMINAL_AND_COMMAND_LINE = {"picocli..", "org.jline.."};

    @ArchTest
    static final ArchRule noPackageCycles = slices().matching("(**)").should().beFreeOfCycles();

    /** The core is the library the others are built on: it knows none of them. */
    @ArchTest
    static final ArchRule coreKnowsNoModuleAboveIt = noClasses().that().resideOutsideOfPackages(ABOVE_THE_CORE)
            .should().dependOnClassesThat().resideInAnyPackage(ABOVE_THE_CORE);

    /** The server is a library too (fs serve is the command line's): no command line, no terminal. */
    @ArchTest
    static final ArchRule serverKnowsNoCommandLine = noClasses().that().resideInAPackage("fs.server..")
            .should().dependOnClassesThat().resideInAnyPackage("fs.cli..", "fs.langchain4j..", "fs.springai..")
            .orShould().dependOnClassesThat().resideInAnyPackage(TERMINAL_AND_COMMAND_LINE);

    /** LangChain4j's and Spring AI's models run fs in the caller's JVM: no HTTP server, no command line. */
    @ArchTest
    static final ArchRule frameworkModelsKnowNoServerNorCommandLine = noClasses().that()
            .resideInAnyPackage("fs.langchain4j..", "fs.springai..")
            .should().dependOnClassesThat().resideInAnyPackage("fs.server..", "fs.cli..", "org.eclipse.jetty..")
            .orShould().dependOnClassesThat().resideInAnyPackage(TERMINAL_AND_COMMAND_LINE);
}
