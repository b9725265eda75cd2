package fs.server.bench;

import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Executors;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * How long a server-sent event takes from the handler's flush to the client's read, on the JDK's HttpServer and on
 * Jetty 12's core, each on virtual threads as fs serve runs them: one event (an OpenAI-sized chunk carrying the
 * nanoTime of its write) every 5 ms, read off a raw socket in the same JVM. A benchmark for the choice of stack
 * (docs/SERVER.md, "Why Jetty"); it asserts nothing. {@code java -cp ... fs.server.bench.SseLatency [EVENTS]}
 */
public final class SseLatency {
    private static final String PAD = "x".repeat(160); // a chat.completion.chunk is about 200 bytes

    private SseLatency() {}

    public static void main(String[] args) throws Exception {
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        for (int round = 0; round < 2; round++) { // the first round warms both up
            HttpServer jdk = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            jdk.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
            jdk.createContext("/", exchange -> {
                exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
                exchange.sendResponseHeaders(200, 0);
                try (OutputStream out = exchange.getResponseBody()) {
                    for (int i = 0; i < events; i++) {
                        out.write(event());
                        out.flush();
                        pause();
                    }
                }
            });
            jdk.start();
            long[] jdkLatency = measure(jdk.getAddress().getPort(), events);
            jdk.stop(0);

            Server jetty = new Server(new VirtualThreadPool());
            ServerConnector connector = new ServerConnector(jetty, 1, 1, new HttpConnectionFactory());
            connector.setHost("127.0.0.1");
            jetty.addConnector(connector);
            jetty.setHandler(new Handler.Abstract() {
                @Override
                public boolean handle(Request request, Response response, Callback callback) throws Exception {
                    response.getHeaders().put("Content-Type", "text/event-stream");
                    for (int i = 0; i < events; i++) {
                        try (Blocker.Callback written = Blocker.callback()) {
                            response.write(false, ByteBuffer.wrap(event()), written);
                            written.block();
                        }
                        pause();
                    }
                    callback.succeeded();
                    return true;
                }
            });
            jetty.start();
            long[] jettyLatency = measure(connector.getLocalPort(), events);
            jetty.stop();
            if (round == 1) {
                report("JDK HttpServer", jdkLatency);
                report("Jetty 12 core ", jettyLatency);
            }
        }
    }

    private static byte[] event() {
        return ("data: {\"t\":" + System.nanoTime() + ",\"pad\":\"" + PAD + "\"}\n\n").getBytes(StandardCharsets.US_ASCII);
    }

    private static void pause() {
        java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
    }

    /** Each event's latency in microseconds, from the nanoTime written in it to the read of its end. */
    private static long[] measure(int port, int events) throws Exception {
        long[] latency = new long[events];
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setTcpNoDelay(true);
            socket.getOutputStream().write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder text = new StringBuilder();
            int seen = 0;
            byte[] buffer = new byte[8192];
            while (seen < events) {
                int n = in.read(buffer);
                if (n < 0) break;
                long now = System.nanoTime();
                text.append(new String(buffer, 0, n, StandardCharsets.US_ASCII));
                int at;
                while (seen < events && (at = text.indexOf("{\"t\":")) >= 0 && text.indexOf("\n\n", at) >= 0) {
                    long sent = Long.parseLong(text.substring(at + 5, text.indexOf(",", at)));
                    latency[seen++] = (now - sent) / 1000;
                    text.delete(0, text.indexOf("\n\n", at) + 2);
                }
            }
        }
        return latency;
    }

    private static void report(String stack, long[] micros) {
        long[] sorted = micros.clone();
        Arrays.sort(sorted);
        System.out.printf(Locale.ROOT, "%s: flush to read p50 %d µs, p99 %d µs, max %d µs (%d events)%n", stack,
                sorted[sorted.length / 2], sorted[(int) (sorted.length * 0.99)], sorted[sorted.length - 1],
                sorted.length);
    }
}
