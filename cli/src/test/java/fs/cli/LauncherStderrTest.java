package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The launcher's way around the JVM's incubator warning: the JVM starts with fd 2 on /dev/null and the real stderr on
 * fd 3, and main moves it back. Run here as ./fs runs it (an exec with those redirections), minus the jar.
 */
class LauncherStderrTest {

    @Test
    void mainGivesTheSavedStderrBackAndTheWarningStaysOut() throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> jvm = List.of(java, "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-Dfs.stderr.fd=3", "-cp", System.getProperty("java.class.path"), "fs.cli.Main", "run", "/nonexistent/model", "-p", "hi");
        List<String> command = new ArrayList<>(List.of("bash", "-c", "exec \"$@\" 3>&2 2>/dev/null", "launcher"));
        command.addAll(jvm);
        Process fs = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        String err = new String(fs.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, fs.waitFor(), err);
        assertEquals("fs: '/nonexistent/model' is not a directory and not a Hugging Face repo id (owner/name, e.g. "
                + "Qwen/Qwen3-0.6B)\n", err);
    }
}
