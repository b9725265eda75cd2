package fs.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** fs serve's refusals, each one line and the CLI's exit status, before any model is loaded or while it loads. */
class ServeCommandTest {

    private record Run(int exit, String err) {}

    private static Run serve(String... args) {
        StringWriter err = new StringWriter();
        String[] command = new String[args.length + 1];
        command[0] = "serve";
        System.arraycopy(args, 0, command, 1, args.length);
        int exit = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err, true), command);
        return new Run(exit, err.toString());
    }

    private static void assertOneErrorLine(Run run, int exit, String fragment) {
        assertEquals(exit, run.exit(), run.err());
        String[] lines = run.err().strip().split("\n");
        String last = lines[lines.length - 1];
        assertTrue(last.startsWith("fs: ") && last.contains(fragment), run.err());
        assertTrue(!run.err().contains("\tat "), "no stack trace: " + run.err());
    }

    @Test
    void flagsOutOfRangeAreUsageErrors() {
        assertOneErrorLine(serve("--port", "70000"), 2, "--port must be between 0 and 65535");
        assertOneErrorLine(serve("--parallel", "0"), 2, "--parallel must be in 1..256");
        assertOneErrorLine(serve("--parallel", "300"), 2, "--parallel must be in 1..256");
        assertOneErrorLine(serve("--queue", "0"), 2, "--queue must be at least 1");
    }

    @Test
    void aContextTooSmallToShareAmongTheSlotsIsOneLine() {
        Run run = serve(TestServer.MODEL.toString(), "--port", "0", "--ctx", "3", "--parallel", "4");
        assertOneErrorLine(run, 1, "--ctx 3 shared among --parallel 4 slots leaves none for each");
    }

    @Test
    void aPortInUseIsOneLine() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Run run = serve(TestServer.MODEL.toString(), "--port", Integer.toString(taken.getLocalPort()));
            assertOneErrorLine(run, 1, "cannot listen on 127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void aModelThatCannotLoadEndsTheServerWithItsError() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Run run = serve(TestServer.MODEL.resolve("no-such-model").toString(), "--port", Integer.toString(port));
        assertEquals(1, run.exit(), run.err());
        assertTrue(run.err().contains("fs: listening on http://127.0.0.1:" + port), run.err());
        // The port is free again: the server stopped with the command.
        try (ServerSocket again = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertEquals(port, again.getLocalPort());
        }
    }

    @Test
    void anEmptyApiKeyIsRefused() {
        assertOneErrorLine(serve("--api-key", " "), 1, "--api-key is empty");
    }
}
