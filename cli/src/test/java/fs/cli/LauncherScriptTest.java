package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.model.Golden;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The launcher {@code ./fs} itself, run as a user runs it, on a copy of the repository's layout in a temporary folder
 * (a folder name with a space in it): the launcher script copied from the repository, and a cli/target/fs.jar that
 * holds only a manifest naming fs.cli.Main and this test's classpath. A real jar would need Maven's package phase,
 * which comes after the tests; the real repository's launcher would start a Maven build inside this one.
 */
class LauncherScriptTest {
    private static final Path LAUNCHER = Path.of(System.getProperty("fs.repo"), "fs");

    @TempDir
    private Path temp;
    private Path repo;
    private Path manifestJar;

    @BeforeEach
    void copyTheLauncher() throws IOException {
        repo = Files.createDirectories(temp.resolve("a clone"));
        Files.copy(LAUNCHER, repo.resolve("fs"), StandardCopyOption.COPY_ATTRIBUTES);
        manifestJar = temp.resolve("fs.jar");
        writeManifestJar(manifestJar);
    }

    @Test
    void aSymlinkOnPathRunsTheRepositorysLauncher() throws Exception {
        Files.copy(manifestJar, Files.createDirectories(repo.resolve("cli/target")).resolve("fs.jar"));
        // As `ln -s "$PWD/fs" ~/.local/bin/fs` makes it, and one link further, relative: the launcher follows both.
        Path bin = Files.createDirectories(temp.resolve("bin"));
        Path links = Files.createDirectories(temp.resolve("links"));
        Files.createSymbolicLink(links.resolve("fs"), repo.resolve("fs"));
        Files.createSymbolicLink(bin.resolve("fs"), Path.of("../links/fs"));

        Launched fs = launch(List.of("bash", "-c", "fs --version"), bin); // a shell looks fs up on PATH

        assertEquals(0, fs.exit(), fs.err());
        assertEquals(version() + "\n", fs.out());
        assertEquals("", fs.err());
    }

    /** {@code ./fs} alone lists the commands (on stderr: no command ran) and exits as a usage error does. */
    @Test
    void theLauncherAloneListsTheCommands() throws Exception {
        Files.copy(manifestJar, Files.createDirectories(repo.resolve("cli/target")).resolve("fs.jar"));

        Launched fs = launch(List.of(repo.resolve("fs").toString()), temp);

        assertEquals(2, fs.exit(), fs.err());
        assertEquals("", fs.out());
        assertTrue(fs.err().startsWith("Usage: fs "), fs.err());
        for (Class<?> command : Main.COMMANDS) {
            String name = command.getAnnotation(CommandLine.Command.class).name();
            assertTrue(fs.err().lines().anyMatch(line -> line.matches("  " + name + "[ ,].*")), name + ": " + fs.err());
        }
        assertTrue(fs.err().endsWith("\nfs: a command is required\n"), fs.err());
    }

    @Test
    void aBuildShowsEachModuleOnStderrAndKeepsStdoutForTheCommand() throws Exception {
        // Maven 3's reactor lines as `mvn -B -Dstyle.color=never package` prints them, colour resets included.
        Path bin = fakeMaven("""
                printf '[INFO] Scanning for projects...\\n'
                printf '[INFO] Downloading from central: https://repo.maven.apache.org/a.pom\\n'
                printf '[INFO] Downloaded from central: https://repo.maven.apache.org/a.pom (2 kB)\\n'
                printf '[INFO] Building fs 0.1.0-SNAPSHOT                                   [1/3]\\033[m\\n'
                printf '\\033[1m[INFO] Building fs core 0.1.0-SNAPSHOT                         [2/3]\\033[m\\n'
                printf '[WARNING] JAR will be empty - no content was marked for inclusion!\\n'
                printf '[INFO] Building jar: %s/core/target/fs-core.jar\\n' "$PWD"
                printf '[INFO] Building fs CLI 0.1.0-SNAPSHOT                                [3/3]\\n'
                mkdir -p cli/target && cp "$FAKE_JAR" cli/target/fs.jar
                printf '[INFO] BUILD SUCCESS\\n'
                """);

        Launched fs = launch(List.of(repo.resolve("fs").toString(), "--version"), bin);

        assertEquals(0, fs.exit(), fs.err());
        assertEquals(version() + "\n", fs.out());
        assertEquals("""
                fs: building the jar with Maven (on the first run and after the sources change)…
                fs: downloading Maven plugins and libraries (the first build only)…
                fs: building fs (1/3)…
                fs: building fs core (2/3)…
                fs: building fs CLI (3/3)…
                """, fs.err());
        assertTrue(Files.isRegularFile(repo.resolve("cli/target/fs.jar")));
        try (Stream<Path> left = Files.list(temp)) {
            assertFalse(left.anyMatch(file -> file.getFileName().toString().startsWith("fs-build.")),
                    "the log of a build that succeeded is removed");
        }
    }

    @Test
    void aFailedBuildShowsWhatMavenReportedAndKeepsItsLog() throws Exception {
        Path bin = fakeMaven("""
                printf '[INFO] Building fs core 0.1.0-SNAPSHOT                         [1/1]\\n'
                printf '[INFO] Compiling 3 source files\\n'
                printf '[ERROR] /src/A.java:[2,24] illegal start of expression\\n'
                printf '[ERROR] -> [Help 1]\\n'
                exit 1
                """);

        Launched fs = launch(List.of(repo.resolve("fs").toString(), "--version"), bin);

        assertEquals(1, fs.exit(), fs.err());
        assertEquals("", fs.out());
        List<String> lines = fs.err().lines().toList();
        assertEquals(List.of(
                "fs: building the jar with Maven (on the first run and after the sources change)…",
                "fs: building fs core (1/1)…",
                "[ERROR] /src/A.java:[2,24] illegal start of expression",
                "[ERROR] -> [Help 1]"), lines.subList(0, lines.size() - 1));
        Matcher last = Pattern.compile("fs: the build failed \\(see above; Maven's whole log: (.*)\\)")
                .matcher(lines.getLast());
        assertTrue(last.matches(), lines.getLast());
        assertTrue(Files.readString(Path.of(last.group(1))).contains("[INFO] Compiling 3 source files\n"),
                "the log keeps what the terminal was spared");
    }

    /** What `fs --version` prints: the version and commit of the build whose classes this test runs. */
    private static String version() throws IOException {
        return new Main.Version().getVersion()[0];
    }

    /** A folder holding an executable `mvn` that runs {@code script} in the folder it is started in. */
    private Path fakeMaven(String script) throws IOException {
        Path bin = Files.createDirectories(temp.resolve("fake-maven"));
        Path mvn = Files.writeString(bin.resolve("mvn"), "#!/usr/bin/env bash\n" + script);
        assertTrue(mvn.toFile().setExecutable(true));
        return bin;
    }

    /**
     * Ctrl-C while fs run writes its answer: the answer ends where it is, with its final newline, the speeds of what
     * was generated follow on stderr, and the exit status is a SIGINT's (130).
     */
    @Test
    void ctrlCDuringRunEndsTheLineAndPrintsTheSpeeds() throws Exception {
        Files.copy(manifestJar, Files.createDirectories(repo.resolve("cli/target")).resolve("fs.jar"));
        // No -n: without the interrupt it would write until the context of 4,096 positions is full.
        Process fs = start(List.of(repo.resolve("fs").toString(), "run", Golden.modelDir("tiny-tied").toString(),
                "-p", "hi", "--temp", "0", "-t", "1", "--backend", "cpu"), temp);
        fs.getOutputStream().close();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> readAll(fs.getErrorStream()));
        InputStream stdout = fs.getInputStream();
        int first = stdout.read(); // the answer has begun

        assertEquals(0, new ProcessBuilder("kill", "-INT", Long.toString(fs.pid())).start().waitFor());
        String out = (char) first + readAll(stdout);

        assertEquals(CtrlC.EXIT, fs.waitFor(), err.join());
        assertTrue(first >= 0 && out.endsWith("\n"), "stdout ends its line: " + out);
        List<String> lines = err.join().lines().toList();
        assertTrue(lines.contains("fs: stopped: interrupted (Ctrl-C)"), err.join());
        assertTrue(lines.getLast().matches("generation: \\d+ tokens \\(\\d+ forwards\\) in .* tok/s\\)"), err.join());
    }

    /** Runs the launcher with {@code pathFirst} at the front of PATH, on this JVM's JDK, without the startup cache. */
    private Launched launch(List<String> command, Path pathFirst) throws IOException, InterruptedException {
        Process process = start(command, pathFirst);
        process.getOutputStream().close();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()));
        String out = readAll(process.getInputStream());
        return new Launched(process.waitFor(), out, err.join());
    }

    /** The launcher started as {@link #launch} starts it, for a test that talks to it while it runs. */
    private Process start(List<String> command, Path pathFirst) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("PATH", pathFirst + File.pathSeparator + System.getenv("PATH"));
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("FS_AOT", "0");
        builder.environment().put("TMPDIR", temp.toString());
        builder.environment().put("FAKE_JAR", manifestJar.toString());
        builder.environment().remove("FS_JAVA_OPTS");
        return builder.start();
    }

    private static String readAll(InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A jar with no classes: its manifest names the CLI's main class and this test's classpath. */
    private static void writeManifestJar(Path jar) throws IOException {
        String classPath = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(entry -> Path.of(entry).toUri().toString())
                .collect(Collectors.joining(" "));
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.put(Attributes.Name.MAIN_CLASS, Main.class.getName());
        main.put(Attributes.Name.CLASS_PATH, classPath);
        try (OutputStream file = Files.newOutputStream(jar);
             JarOutputStream ignored = new JarOutputStream(file, manifest)) {
            // the manifest is the whole jar
        }
    }

    private record Launched(int exit, String out, String err) {}
}
