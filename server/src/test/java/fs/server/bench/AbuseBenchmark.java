package fs.server.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * The load-and-abuse benchmark of docs/RELIABILITY.md, against a running fs serve: well-behaved streaming clients
 * (each request answered in full, a 503 retried after its Retry-After) beside slowloris connections (headers a byte a
 * second) and clients that send a whole request and hang up 0.3 s later. It reports the well-behaved requests'
 * outcomes and time to first token, and the server's RSS, open descriptors and fs_requests_processing before and
 * after. A benchmark, not a test: it asserts nothing.
 *
 * <pre>java -cp ... fs.server.bench.AbuseBenchmark PORT PID SECONDS [STREAMS SLOWLORIS ABANDONED]</pre>
 */
public final class AbuseBenchmark {
    private static final String STREAM = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story.\"}],"
            + "\"max_tokens\":16,\"stream\":true}";
    /** A delta with text in it: the first token's (the stream's first event has only the role). */
    private static final java.util.regex.Pattern FIRST_TOKEN = java.util.regex.Pattern.compile("\"content\":\"[^\"]");
    private static final String WHOLE = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a long story.\"}]}";

    private AbuseBenchmark() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        long pid = Long.parseLong(args[1]);
        Duration length = Duration.ofSeconds(Long.parseLong(args[2]));
        int streams = args.length > 3 ? Integer.parseInt(args[3]) : 64;
        int slowloris = args.length > 4 ? Integer.parseInt(args[4]) : 200;
        int abandoned = args.length > 5 ? Integer.parseInt(args[5]) : 100;
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        URI base = URI.create("http://127.0.0.1:" + port);
        System.out.printf(Locale.ROOT, "start: rss %d MiB, fds %d, %s%n", rssMiB(pid), fds(pid), processing(http, base));

        long deadline = System.nanoTime() + length.toNanos();
        LongAdder answered = new LongAdder(), retried = new LongAdder(), failed = new LongAdder();
        LongAdder cut = new LongAdder(), hungUp = new LongAdder();
        List<Long> ttftMicros = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                while (System.nanoTime() < deadline) stream(http, base, ttftMicros, answered, retried, failed);
            }));
        }
        for (int i = 0; i < slowloris; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                while (System.nanoTime() < deadline) slowloris(port, deadline, cut);
            }));
        }
        for (int i = 0; i < abandoned; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                while (System.nanoTime() < deadline) abandon(port, hungUp);
            }));
        }
        for (Thread thread : threads) thread.join();

        List<Long> sorted = new ArrayList<>(ttftMicros);
        Collections.sort(sorted);
        System.out.printf(Locale.ROOT, "well-behaved: %d answered in full, %d 503s retried, %d failed%n",
                answered.sum(), retried.sum(), failed.sum());
        if (!sorted.isEmpty()) {
            System.out.printf(Locale.ROOT, "time to first token: p50 %.2f s, p99 %.2f s, max %.2f s%n",
                    sorted.get(sorted.size() / 2) / 1e6, sorted.get((int) (sorted.size() * 0.99)) / 1e6,
                    sorted.getLast() / 1e6);
        }
        System.out.printf(Locale.ROOT, "slowloris connections cut by the server: %d; abandoned requests: %d%n",
                cut.sum(), hungUp.sum());
        http.close(); // its kept-alive connections, which the server would otherwise hold until its idle timeout
        HttpClient fresh = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        long settle = System.nanoTime();
        String after = processing(fresh, base);
        while (!after.endsWith(" 0") && System.nanoTime() - settle < Duration.ofSeconds(30).toNanos()) {
            Thread.sleep(100);
            after = processing(fresh, base);
        }
        Thread.sleep(5000); // the server closes its ends of the connections the clients closed
        System.out.printf(Locale.ROOT, "end (%.1f s after the load): rss %d MiB, fds %d, %s%n",
                (System.nanoTime() - settle) / 1e9, rssMiB(pid), fds(pid), after);
    }

    private static void stream(HttpClient http, URI base, List<Long> ttft, LongAdder answered, LongAdder retried,
                               LongAdder failed) {
        long start = System.nanoTime();
        try {
            HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                    .header("Content-Type", "application/json").timeout(Duration.ofMinutes(10))
                    .POST(HttpRequest.BodyPublishers.ofString(STREAM)).build(), HttpResponse.BodyHandlers.ofInputStream());
            if (response.statusCode() == 503) {
                response.body().close();
                retried.increment();
                Thread.sleep(1000);
                return;
            }
            if (response.statusCode() != 200) {
                response.body().close();
                failed.increment();
                return;
            }
            try (InputStream in = response.body()) {
                StringBuilder seen = new StringBuilder();
                boolean first = true;
                int b;
                while ((b = in.read()) >= 0) {
                    seen.append((char) b);
                    if (first && FIRST_TOKEN.matcher(seen).find()) {
                        ttft.add((System.nanoTime() - start) / 1000);
                        first = false;
                    }
                }
                if (seen.indexOf("data: [DONE]") >= 0) answered.increment();
                else failed.increment();
            }
        } catch (IOException | InterruptedException e) {
            failed.increment();
        }
    }

    /** Headers a byte a second until the server answers or closes (which it must, at its header timeout). */
    private static void slowloris(int port, long deadline, LongAdder cut) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            OutputStream out = socket.getOutputStream();
            out.write("GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            socket.setSoTimeout(1000);
            InputStream in = socket.getInputStream();
            while (System.nanoTime() < deadline) {
                out.write('a');
                out.flush();
                try {
                    in.read(); // returns with the server's answer (the 408) or the end of the connection
                    cut.increment();
                    return;
                } catch (java.net.SocketTimeoutException e) {
                    // nothing yet: one more byte
                }
            }
        } catch (IOException e) {
            cut.increment();
        }
    }

    private static void abandon(int port, LongAdder hungUp) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            byte[] body = WHOLE.getBytes(StandardCharsets.UTF_8);
            socket.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().write(body);
            Thread.sleep(300);
            hungUp.increment();
        } catch (IOException | InterruptedException e) {
            // refused or reset: the next one tries again
        }
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String processing(HttpClient http, URI base) {
        try {
            String metrics = http.send(HttpRequest.newBuilder(base.resolve("/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            return metrics.lines().filter(l -> l.startsWith("fs_requests_processing ")).findFirst().orElse("?");
        } catch (IOException | InterruptedException e) {
            return "fs_requests_processing ? (" + e + ")";
        }
    }

    private static long rssMiB(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
        }
        return -1;
    }

    private static long fds(long pid) throws IOException {
        try (var list = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return list.count();
        }
    }
}
