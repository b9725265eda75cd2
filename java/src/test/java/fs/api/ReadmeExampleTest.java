package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example of README.md's "Use fs from Java" compiles against the library as it is, and runs: on models/tiny-tied
 * it prints a streamed answer and its closing line.
 */
class ReadmeExampleTest {
    private static final Path README = Path.of(System.getProperty("fs.repo"), "README.md");
    private static final Pattern SECTION = Pattern.compile("(?s)## Use fs from Java\n.*?```java\n(.*?)```");

    @Test
    void theReadmeExampleCompilesAndRuns(@TempDir Path dir) throws Exception {
        Matcher block = SECTION.matcher(Files.readString(README));
        assertTrue(block.find(), "README.md has a java block under \"## Use fs from Java\"");
        String code = block.group(1);
        long lines = code.lines().filter(line -> !line.isBlank()).count();
        assertTrue(lines <= 12, "the example stays short: " + lines + " lines");
        Path source = dir.resolve("Hello.java");
        Files.writeString(source, code);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int status = javac.run(null, diagnostics, diagnostics, "-classpath", classesOf(FsModel.class), "-d",
                dir.toString(), source.toString());
        assertEquals(0, status, diagnostics.toString(StandardCharsets.UTF_8));

        String output = run(dir, List.of(GreedyReference.MODEL.toString()));
        assertTrue(Pattern.compile("(?s).*\n\\[\\d+ tokens, (END_OF_SEQUENCE|TOKEN_LIMIT|CONTEXT_FULL)]\\R")
                .matcher(output).matches(), output);
        assertTrue(output.length() > "\n[1 tokens, TOKEN_LIMIT]\n".length(), "some answer was streamed: " + output);
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
