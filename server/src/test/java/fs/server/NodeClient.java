package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.ProcessOutput;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs one of server/src/test/node's scripts, which drive an official JavaScript client (the versions package.json
 * pins; .ci/run installs them with {@code npm ci}) against a live server, and returns what it printed. A script that
 * fails, or a client that is not installed, fails the test with what node printed.
 */
final class NodeClient {
    static final Path DIR = Path.of(System.getProperty("fs.repo"), "server", "src", "test", "node");

    private NodeClient() {}

    /** Standard output of {@code node SCRIPT ARGS...} run in the scripts' folder, which must exit 0 within 2 min. */
    static String run(String script, String... args) throws IOException, InterruptedException {
        assertTrue(Files.isDirectory(DIR.resolve("node_modules")), "the JavaScript clients are not installed: run "
                + "'npm ci --prefix server/src/test/node' (.ci/run does)");
        List<String> command = new ArrayList<>(List.of("node", script));
        command.addAll(List.of(args));
        Process node = new ProcessBuilder(command).directory(DIR.toFile()).start();
        CompletableFuture<String> err = ProcessOutput.text(node.getErrorStream());
        String out = ProcessOutput.text(node.getInputStream()).join();
        if (!node.waitFor(2, TimeUnit.MINUTES)) {
            node.destroyForcibly();
            throw new AssertionError(script + " ran past 2 minutes; it printed:\n" + out);
        }
        assertEquals(0, node.exitValue(), script + " failed:\n" + out + err.join());
        return out;
    }
}
