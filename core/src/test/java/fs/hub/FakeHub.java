package fs.hub;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Hugging Face hub on 127.0.0.1 for one repo, behaving like huggingface.co: {@code /{repo}/resolve/{rev}/{file}}
 * answers HEAD and GET for revision "main" or the commit, {@code /api/models/{repo}/revision/{rev}} lists the files, with X-Repo-Commit and an ETag (a sha1 for small files);
 * large ("LFS") files get a 302 to a separate CDN server carrying X-Linked-Etag (their sha256) and X-Linked-Size.
 * The CDN honours Range ({@code bytes=START-} and {@code bytes=START-END}). Faults can be switched on: a transfer cut
 * off, a stall, corrupted bytes, a required token, a CDN that ignores Range. Public for fs-cli's tests of {@code fs inspect REPO}.
 */
public final class FakeHub implements AutoCloseable {
    public static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";

    final String repo;
    private final Map<String, byte[]> files = new LinkedHashMap<>();
    private final Map<String, String> lfsBySha = new LinkedHashMap<>();
    private final HttpServer hub;
    private final HttpServer cdn;

    /** "METHOD path" of every request to the hub and to the CDN. */
    final List<String> requests = Collections.synchronizedList(new ArrayList<>());
    final List<String> cdnRanges = Collections.synchronizedList(new ArrayList<>());
    final List<String> hubAuthorizations = Collections.synchronizedList(new ArrayList<>());
    final List<String> cdnAuthorizations = Collections.synchronizedList(new ArrayList<>());
    /** Body bytes the CDN has sent, over all transfers. */
    public final AtomicLong cdnBytesServed = new AtomicLong();

    volatile String requiredToken;
    /** When ≥ 0: the next CDN transfer stops after this many bytes and drops the connection. */
    volatile long cutNextTransferAfter = -1;
    /** When set: CDN transfers send one chunk, then wait for this latch. */
    volatile CountDownLatch stall;
    /** Flip one byte of every large file the CDN sends. */
    volatile boolean corrupt;
    /** The CDN answers every request with 200 and the whole file, as a server without Range support does. */
    volatile boolean ignoreRange;

    public FakeHub(String repo) throws IOException {
        this.repo = repo;
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        hub = HttpServer.create(loopback, 0);
        cdn = HttpServer.create(loopback, 0);
        hub.createContext("/", this::serveHub);
        cdn.createContext("/", this::serveCdn);
        hub.start();
        cdn.start();
    }

    /** A small file served directly by the hub (ETag: its sha1). */
    public FakeHub file(String name, String content) {
        files.put(name, content.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return this;
    }

    /** A large file redirected to the CDN (X-Linked-Etag: its sha256). */
    public FakeHub lfsFile(String name, byte[] content) {
        files.put(name, content);
        lfsBySha.put(sha256(content), name);
        return this;
    }

    byte[] content(String name) {
        return files.get(name);
    }

    public String endpoint() {
        return "http://127.0.0.1:" + hub.getAddress().getPort();
    }

    static String sha256(byte[] content) {
        return hex("SHA-256", content);
    }

    static String sha1(byte[] content) {
        return hex("SHA-1", content);
    }

    private static String hex(String algorithm, byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private void serveHub(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            requests.add(exchange.getRequestMethod() + " " + path);
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            if (authorization != null) hubAuthorizations.add(authorization);
            if (path.equals("/api/models/" + repo + "/revision/main") || path.equals("/api/models/" + repo + "/revision/" + COMMIT)) {
                serveListing(exchange);
                return;
            }
            String prefix = "/" + repo + "/resolve/";
            if (!path.startsWith(prefix)) {
                send(exchange, 404, null);
                return;
            }
            if (requiredToken != null && !("Bearer " + requiredToken).equals(authorization)) {
                exchange.getResponseHeaders().set("X-Error-Message", "Invalid credentials in Authorization header");
                send(exchange, 401, null);
                return;
            }
            String rest = path.substring(prefix.length());
            int slash = rest.indexOf('/');
            String revision = rest.substring(0, slash);
            String name = rest.substring(slash + 1);
            byte[] content = files.get(name);
            if (!revision.equals("main") && !revision.equals(COMMIT) || content == null) {
                exchange.getResponseHeaders().set("X-Error-Code", "EntryNotFound");
                send(exchange, 404, null);
                return;
            }
            var headers = exchange.getResponseHeaders();
            headers.set("X-Repo-Commit", COMMIT);
            String sha = sha256(content);
            if (lfsBySha.containsKey(sha)) {
                headers.set("X-Linked-Etag", "\"" + sha + "\"");
                headers.set("X-Linked-Size", Long.toString(content.length));
                headers.set("ETag", "\"" + sha1(content) + "\"");
                headers.set("Location", "http://127.0.0.1:" + cdn.getAddress().getPort() + "/blobs/" + sha + "?sig=x");
                send(exchange, 302, null);
                return;
            }
            headers.set("ETag", "\"" + sha1(content) + "\"");
            send(exchange, 200, content);
        }
    }

    /** The model API's answer for the repo at main: its commit and every file (huggingface_hub's model_info). */
    private void serveListing(HttpExchange exchange) throws IOException {
        StringBuilder json = new StringBuilder("{\"id\": \"" + repo + "\", \"sha\": \"" + COMMIT + "\", \"siblings\": [");
        int i = 0;
        for (String name : files.keySet()) json.append(i++ == 0 ? "" : ", ").append("{\"rfilename\": \"").append(name).append("\"}");
        json.append("]}");
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        send(exchange, 200, json.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private void serveCdn(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            requests.add(exchange.getRequestMethod() + " cdn" + path);
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            if (authorization != null) cdnAuthorizations.add(authorization);
            String name = lfsBySha.get(path.substring("/blobs/".length()));
            if (name == null) {
                send(exchange, 404, null);
                return;
            }
            byte[] content = files.get(name).clone();
            if (corrupt) content[content.length / 2] ^= 1;
            long start = 0;
            long end = content.length - 1; // inclusive, as in a Range
            String range = exchange.getRequestHeaders().getFirst("Range");
            if (range != null) cdnRanges.add(range);
            if (ignoreRange) range = null;
            if (range != null) {
                String spec = range.substring("bytes=".length());
                int dash = spec.indexOf('-');
                start = Long.parseLong(spec.substring(0, dash));
                if (dash + 1 < spec.length()) end = Math.min(end, Long.parseLong(spec.substring(dash + 1)));
                if (start >= content.length || end < start) {
                    send(exchange, 416, null);
                    return;
                }
                exchange.getResponseHeaders().set("Content-Range",
                        "bytes " + start + "-" + end + "/" + content.length);
            }
            int length = (int) (end + 1 - start);
            exchange.getResponseHeaders().set("ETag", "\"" + sha256(files.get(name)) + "\"");
            if (exchange.getRequestMethod().equals("HEAD")) {
                exchange.getResponseHeaders().set("Content-Length", Integer.toString(length));
                exchange.sendResponseHeaders(range != null ? 206 : 200, -1);
                return;
            }
            exchange.sendResponseHeaders(range != null ? 206 : 200, length);
            long cut = cutNextTransferAfter;
            cutNextTransferAfter = -1;
            CountDownLatch stallLatch = stall;
            OutputStream body = exchange.getResponseBody();
            int chunk = 64 * 1024;
            for (int offset = (int) start; offset <= end; offset += chunk) {
                int n = (int) Math.min(chunk, end + 1 - offset);
                if (cut >= 0) n = (int) Math.min(n, start + cut - offset);
                if (n <= 0) break;
                // Counted before the write: once flushed, the client may read them and the test look at the count
                // before this thread gets to add them (seen on a loaded machine: 8 counted of 2,400 sent).
                cdnBytesServed.addAndGet(n);
                body.write(content, offset, n);
                body.flush();
                if (stallLatch != null) {
                    try {
                        stallLatch.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    break;
                }
            }
            if (cut >= 0) {
                // A handler that fails before the whole body is written makes the server drop the connection.
                throw new IOException("transfer cut off on purpose after " + cut + " bytes");
            }
        }
    }

    private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
        boolean head = exchange.getRequestMethod().equals("HEAD");
        if (head || body == null) {
            if (body != null) exchange.getResponseHeaders().set("Content-Length", Integer.toString(body.length));
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    @Override
    public void close() {
        CountDownLatch stallLatch = stall;
        if (stallLatch != null) stallLatch.countDown();
        hub.stop(0);
        cdn.stop(0);
    }
}
