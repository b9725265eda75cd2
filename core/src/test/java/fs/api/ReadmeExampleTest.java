package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
 * README.md's "Use fs from Java" is a recipe that works: its Java example compiles against the library as it is and
 * runs (on models/tiny-tied it prints a streamed answer and its closing line); its pom.xml asks for fs-core by the
 * coordinates fs's own poms give it, on fs's Java release and plugin versions; its commands install fs and start the
 * JVM with the flags fs's build runs everything with. Running Maven itself would take the network, so the pom and
 * the commands are checked against the poms rather than run.
 */
class ReadmeExampleTest {
    private static final Path REPO = Path.of(System.getProperty("fs.repo"));
    private static final Pattern SECTION = Pattern.compile("(?s)\n## Use fs from Java\n(.*?)(\n## |$)");
    private static final Pattern BLOCK = Pattern.compile("(?s)```(\\w+)\n(.*?)```");

    @Test
    void theReadmeExampleCompilesAndRuns(@TempDir Path dir) throws Exception {
        String code = blocks("java").getFirst();
        long lines = code.lines().filter(line -> !line.isBlank()).count();
        assertTrue(lines <= 12, "the example stays short: " + lines + " lines");
        compileExample(dir);

        String output = run(dir, List.of(GreedyReference.MODEL.toString()));
        assertTrue(Pattern.compile("(?s).*\n\\[\\d+ tokens, (END_OF_SEQUENCE|TOKEN_LIMIT|CONTEXT_FULL)]\\R")
                .matcher(output).matches(), output);
        assertTrue(output.length() > "\n[1 tokens, TOKEN_LIMIT]\n".length(), "some answer was streamed: " + output);
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
        assertTrue(commands.getFirst().contains("mvn -B install -DskipTests"), commands.getFirst());

        String run = commands.getLast();
        Document parent = xml(Files.readString(REPO.resolve("pom.xml")));
        String flags = value(parent, "/project/properties/fs.jvm.flags");
        assertTrue(run.contains("/bin/java\" " + flags + " \\\n"), "the JVM flags of fs's build: " + run);
        assertTrue(run.contains("mvn -B -q compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt"),
                run);
        assertTrue(run.contains("-cp \"target/classes:$(cat target/classpath.txt)\" Hello "), run);

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
        String first = err.lines().findFirst().orElse("");
        assertEquals("Exception in thread \"main\" fs.FsException: " + JvmFlags.MISSING_VECTOR_MODULE, first, err);
        assertTrue(first.contains("fs needs the JVM flag --add-modules jdk.incubator.vector"), first);
        assertFalse(err.contains("NoClassDefFoundError"), err);
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

    /** Runs the compiled example's main in this JVM (it needs the flags surefire already gives), capturing stdout. */
    private static String run(Path classes, List<String> args) throws IOException, ReflectiveOperationException {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                ReadmeExampleTest.class.getClassLoader())) {
            Method main = loader.loadClass("Hello").getMethod("main", String[].class);
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) args.toArray(String[]::new));
        } finally {
            System.setOut(saved);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
