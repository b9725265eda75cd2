package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.ProcessOutput;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * README.md's "Use fs from Java" is a recipe that works: its commands, run as written from a folder of their own with
 * the clone's path in {@code FS_CLONE}, start its Java example on models/tiny-tied, which prints a streamed answer and
 * its closing line, and a bad model path ends it with one line; its pom.xml asks for fs-core by the coordinates fs's
 * own poms give it, on fs's Java release and plugin versions; its run line has the JVM flags fs's build runs everything
 * with. Maven itself would take the network, so what its two commands make (the installed fs-core, the compiled
 * class and its classpath file) is made here instead, and the pom is checked against fs's poms rather than built.
 */
class ReadmeExampleTest {
    private static final Path REPO = Path.of(System.getProperty("fs.repo"));
    private static final Pattern SECTION = Pattern.compile("(?s)\n## Use fs from Java\n(.*?)(\n## |$)");
    private static final Pattern BLOCK = Pattern.compile("(?s)```(\\w+)\n(.*?)```");

    @Test
    void theReadmeCommandsRunTheExampleFromAnotherFolder(@TempDir Path app) throws Exception {
        String code = blocks("java").getFirst();
        long lines = code.lines().filter(line -> !line.isBlank()).count();
        assertTrue(lines <= 16, "the example stays short: " + lines + " lines");
        prepareWhatMavenMakes(app);

        Run run = runCommands(app, REPO);
        assertEquals(0, run.exit(), run.err());
        assertTrue(Pattern.compile("(?s).*\n\\[\\d+ tokens, (END_OF_SEQUENCE|TOKEN_LIMIT|CONTEXT_FULL)]\\R")
                .matcher(run.out()).matches(), run.out());
        assertTrue(run.out().length() > "\n[1 tokens, TOKEN_LIMIT]\n".length(),
                "some answer was streamed: " + run.out());
        assertFalse(run.err().contains("Exception"), run.err());
    }

    @Test
    void aBadModelPathEndsTheExampleWithOneLine(@TempDir Path app) throws Exception {
        prepareWhatMavenMakes(app);
        Path noClone = app.resolve("no-clone-here");

        Run run = runCommands(app, noClone);
        assertEquals(1, run.exit(), run.err());
        assertEquals("", run.out());
        List<String> err = withoutTheIncubatorWarning(run.err());
        assertEquals(1, err.size(), run.err());
        assertTrue(err.getFirst().startsWith("hello: ") && err.getFirst().contains(noClone.toString()), run.err());
    }

    @Test
    void theReadmePomAsksForFsCoreAsFsBuildsIt() throws Exception {
        List<String> poms = blocks("xml");
        assertEquals(1, poms.size(), "one pom.xml in the section");
        Document readme = xml(poms.getFirst());
        Document parent = xml(Files.readString(REPO.resolve("pom.xml")));
        Document core = xml(Files.readString(REPO.resolve("core/pom.xml")));

        String dependency = "/project/dependencies/dependency";
        assertEquals(value(parent, "/project/groupId"), value(readme, dependency + "/groupId"));
        assertEquals(value(core, "/project/artifactId"), value(readme, dependency + "/artifactId"));
        assertEquals(value(parent, "/project/version"), value(readme, dependency + "/version"));
        assertEquals(value(parent, "/project/properties/maven.compiler.release"),
                value(readme, "/project/properties/maven.compiler.release"));
        for (String plugin : List.of("maven-resources-plugin", "maven-compiler-plugin", "maven-dependency-plugin")) {
            assertEquals(value(parent, "/project/build/pluginManagement/plugins/plugin[artifactId='" + plugin
                    + "']/version"), value(readme, "/project/build/plugins/plugin[artifactId='" + plugin
                    + "']/version"), plugin);
        }
    }

    @Test
    void theReadmeCommandsInstallFsAndRunTheExampleWithFsJvmFlags() throws Exception {
        String section = section();
        List<String> commands = blocks("sh");
        assertEquals(2, commands.size(), "the install in the clone, then the run in the application's folder");
        assertTrue(commands.getFirst().contains("(cd \"$FS_CLONE\" && mvn -B install -DskipTests)"),
                commands.getFirst());
        assertTrue(commands.getFirst().contains("export MAVEN_OPTS=--sun-misc-unsafe-memory-access=allow\n"),
                "Maven's Unsafe warning silenced: " + commands.getFirst());

        String run = commands.getLast();
        Document parent = xml(Files.readString(REPO.resolve("pom.xml")));
        String flags = value(parent, "/project/properties/fs.jvm.flags");
        assertTrue(run.contains("/bin/java\" " + flags + " \\\n"), "the JVM flags of fs's build: " + run);
        assertTrue(run.contains("LD_PRELOAD=\"$JAVA_HOME/lib/libjsig.so\""), "HotSpot's signal chaining: " + run);
        assertTrue(run.contains("mvn -B -q compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt"),
                run);
        assertTrue(run.contains("-cp \"target/classes:$(cat target/classpath.txt)\" Hello "), run);
        assertFalse(String.join("\n", commands).contains("~/fs/"), "the clone's path is FS_CLONE's alone");

        assertTrue(blocks("java").getFirst().contains("public class Hello {"), "the class the command runs");
        assertTrue(section.contains("`src/main/java/Hello.java`"), "where the class goes, for Maven to compile it");
    }

    @Test
    void withoutTheVectorModuleTheExampleFailsNamingTheFlag(@TempDir Path dir) throws Exception {
        compileExample(dir);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // The test's classpath, but none of the flags surefire starts this JVM with.
        String classPath = dir + File.pathSeparator + System.getProperty("java.class.path");
        Process example = new ProcessBuilder(java, "-cp", classPath, "Hello", GreedyReference.MODEL.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        example.getOutputStream().close();
        String err = new String(example.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);

        assertEquals(1, example.waitFor(), err);
        assertEquals(List.of("hello: " + JvmFlags.MISSING_VECTOR_MODULE), err.lines().toList(), err);
        assertTrue(err.contains("fs needs the JVM flag --add-modules jdk.incubator.vector"), err);
    }

    /** The text of README.md's "Use fs from Java", up to the next section. */
    private static String section() throws IOException {
        Matcher section = SECTION.matcher(Files.readString(REPO.resolve("README.md")));
        assertTrue(section.find(), "README.md has a section \"## Use fs from Java\"");
        return section.group(1);
    }

    /** The section's fenced code blocks in {@code language}, in order. */
    private static List<String> blocks(String language) throws IOException {
        List<String> found = BLOCK.matcher(section()).results()
                .filter(block -> block.group(1).equals(language))
                .map(block -> block.group(2))
                .toList();
        assertFalse(found.isEmpty(), "the section has a " + language + " block");
        return found;
    }

    /** Compiles the section's Java block as Hello.java into {@code dir}, against the library's classes. */
    private static void compileExample(Path dir) throws Exception {
        Path source = Files.writeString(dir.resolve("Hello.java"), blocks("java").getFirst());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int status = javac.run(null, diagnostics, diagnostics, "-classpath", classesOf(FsModel.class), "-d",
                dir.toString(), source.toString());
        assertEquals(0, status, diagnostics.toString(StandardCharsets.UTF_8));
    }

    /** What the section's Maven commands leave in the application's folder: the compiled class and its classpath. */
    private static void prepareWhatMavenMakes(Path app) throws Exception {
        Files.createDirectories(app.resolve("src/main/java"));
        Files.writeString(app.resolve("pom.xml"), blocks("xml").getFirst());
        Files.writeString(app.resolve("src/main/java/Hello.java"), blocks("java").getFirst());
        Path classes = Files.createDirectories(app.resolve("target/classes"));
        compileExample(classes);
        Files.delete(classes.resolve("Hello.java"));
        Files.writeString(app.resolve("target/classpath.txt"), System.getProperty("java.class.path"));
    }

    /**
     * The section's shell commands as one bash script, run in {@code app}: {@code FS_CLONE} set to {@code clone} and
     * {@code JAVA_HOME} to this JVM's, the Maven commands left out (see {@link #prepareWhatMavenMakes}); every other
     * line as written.
     */
    private static Run runCommands(Path app, Path clone) throws Exception {
        StringBuilder script = new StringBuilder("set -e\n");
        int replaced = 0;
        for (String line : String.join("\n", blocks("sh")).split("\n")) {
            if (line.startsWith("FS_CLONE=")) {
                script.append("FS_CLONE='").append(clone).append("'\n");
                replaced++;
            } else if (line.startsWith("export JAVA_HOME=")) {
                script.append("export JAVA_HOME='").append(System.getProperty("java.home")).append("'\n");
                replaced++;
            } else if (!line.contains("mvn ")) {
                script.append(line).append('\n');
            }
        }
        assertEquals(2, replaced, "the commands set FS_CLONE and JAVA_HOME: " + blocks("sh"));
        Process bash = new ProcessBuilder("bash", "-c", script.toString()).directory(app.toFile()).start();
        bash.getOutputStream().close();
        CompletableFuture<String> out = ProcessOutput.text(bash.getInputStream());
        CompletableFuture<String> err = ProcessOutput.text(bash.getErrorStream());
        if (!bash.waitFor(120, TimeUnit.SECONDS)) {
            bash.destroyForcibly();
            throw new AssertionError("the example did not finish in 120 s: " + script);
        }
        return new Run(bash.exitValue(), out.join(), err.join());
    }

    private record Run(int exit, String out, String err) {}

    /** stderr's lines but the JDK's own notice that the Vector API is an incubator module. */
    private static List<String> withoutTheIncubatorWarning(String err) {
        return err.lines().filter(line -> !line.equals("WARNING: Using incubator modules: jdk.incubator.vector"))
                .toList();
    }

    private static Document xml(String text) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
    }

    /** The trimmed text at {@code path}; a path that finds nothing fails the test rather than reading as "". */
    private static String value(Document document, String path) throws Exception {
        String text = XPathFactory.newInstance().newXPath().evaluate(path, document).strip();
        assertFalse(text.isEmpty(), "nothing at " + path);
        return text;
    }

    /** Where the library's classes are: target/classes when testing. */
    private static String classesOf(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
