package fs.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Talks to a Hugging Face hub endpoint: file metadata from {@code /{repo}/resolve/{revision}/{file}} and resumable,
 * verified blob downloads. Redirects are followed by hand so that the hub's own headers (commit, ETag) are read from
 * its first answer and the token is never sent to another host (the hub sends large files to a CDN).
 */
final class HubClient implements AutoCloseable {
    /** What the hub says about a file: the commit it resolved to, the ETag naming its blob, and where to get it. */
    record FileInfo(String commit, String etag, long size, URI location) {}

    /** The commit a revision resolved to and the path of every file of the repo at that commit. */
    record RepoFiles(String commit, List<String> paths) {}

    /** The hub answered with an error status. */
    static final class StatusException extends IOException {
        final int status;

        StatusException(int status, URI uri, String hubMessage) {
            super("HTTP " + status + " for " + uri + (hubMessage != null ? ": " + hubMessage : ""));
            this.status = status;
        }
    }

    /** The network failed: no connection, a timeout, a stalled or cut-off transfer. The message says which. */
    static final class NetworkException extends IOException {
        /** No connection could be made at all (no route, no such host, refused, timed out connecting). */
        final boolean unreachable;

        NetworkException(String reason, Throwable cause) {
            this(reason, cause, false);
        }

        NetworkException(String reason, Throwable cause, boolean unreachable) {
            super(reason, cause);
            this.unreachable = unreachable;
        }
    }

    private static final int MAX_REDIRECTS = 5;
    /** A repo's file listing is a few KB; the hub's answer for a repo of 10^5 files stays below this. */
    private static final int MAX_LISTING_BYTES = 50 * 1000 * 1000;
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern ETAG = Pattern.compile("[A-Za-z0-9_-]+");

    private final URI endpoint;
    private final String token;
    private final Duration readTimeout;
    private final HttpClient http;

    /**
     * @param endpoint    e.g. {@code https://huggingface.co}
     * @param token       sent as a Bearer token to the endpoint's host only; null for none
     * @param readTimeout longest wait for a response or for the next bytes of a body
     */
    HubClient(URI endpoint, String token, Duration connectTimeout, Duration readTimeout) {
        this.endpoint = endpoint;
        this.token = token;
        this.readTimeout = readTimeout;
        this.http = HttpClient.newBuilder()
                .connectTimeout(connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    URI endpoint() {
        return endpoint;
    }

    URI resolveUrl(RepoId repo, String revision, String file) {
        String base = endpoint.toString().replaceAll("/+$", "");
        return URI.create(base + "/" + repo + "/resolve/" + revision + "/" + file);
    }

    /** The hub's metadata for a file at a revision, or empty when the hub says it has no such file (404). */
    Optional<FileInfo> fileInfo(RepoId repo, String revision, String file) throws IOException {
        URI uri = resolveUrl(repo, revision, file);
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            HttpResponse<Void> response = send(request(uri).method("HEAD", HttpRequest.BodyPublishers.noBody()),
                    HttpResponse.BodyHandlers.discarding());
            int status = response.statusCode();
            if (status == 404) return Optional.empty();
            boolean redirect = status >= 300 && status < 400;
            if (status != 200 && !redirect) throw statusError(response);
            String etag = etag(response);
            URI location = redirect ? location(response) : uri;
            if (etag == null && redirect) {
                uri = location; // a redirect without metadata (a renamed repo) leads to the hub's real answer
                continue;
            }
            if (etag == null) throw new IOException("the hub sent no ETag for " + uri);
            String commit = response.headers().firstValue("X-Repo-Commit").orElse(null);
            if (commit == null) {
                throw new IOException(uri + " does not look like a Hugging Face hub: no X-Repo-Commit header");
            }
            long size = response.headers().firstValueAsLong("X-Linked-Size")
                    .orElse(redirect ? -1 : response.headers().firstValueAsLong("Content-Length").orElse(-1));
            return Optional.of(new FileInfo(commit, etag, size, location));
        }
        throw new IOException("more than " + MAX_REDIRECTS + " redirects from " + resolveUrl(repo, revision, file));
    }

    /**
     * The files of a repo at a revision, from the hub's model API ({@code /api/models/{repo}/revision/{revision}}, as
     * huggingface_hub lists them), or empty when the hub has no such repo (404).
     */
    Optional<RepoFiles> repoFiles(RepoId repo, String revision) throws IOException {
        String base = endpoint.toString().replaceAll("/+$", "");
        URI uri = URI.create(base + "/api/models/" + repo + "/revision/" + revision);
        HttpResponse<InputStream> response = get(uri, 0);
        byte[] body;
        try (InputStream in = response.body()) {
            if (response.statusCode() == 404) return Optional.empty();
            if (response.statusCode() != 200) throw statusError(response);
            body = in.readNBytes(MAX_LISTING_BYTES + 1);
        }
        if (body.length > MAX_LISTING_BYTES) throw new IOException(uri + " sent a listing over " + MAX_LISTING_BYTES + " bytes");
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(body);
        } catch (IOException e) {
            throw new IOException(uri + " did not send a JSON repo listing", e);
        }
        JsonNode sha = root == null ? null : root.get("sha");
        JsonNode siblings = root == null ? null : root.get("siblings");
        if (sha == null || !sha.isTextual() || siblings == null || !siblings.isArray()) {
            throw new IOException(uri + " sent no commit (sha) and file list (siblings)");
        }
        List<String> paths = new ArrayList<>();
        for (JsonNode sibling : siblings) {
            JsonNode name = sibling.get("rfilename");
            if (name == null || !name.isTextual()) throw new IOException(uri + " lists a file without a name");
            paths.add(name.textValue());
        }
        return Optional.of(new RepoFiles(sha.textValue(), List.copyOf(paths)));
    }

    /**
     * Downloads a file into {@code blob}, through {@code blob.incomplete}: a partial file left by an earlier attempt
     * is continued with an HTTP Range request. When the ETag is a sha256 the bytes are checked against it, and a
     * mismatch deletes the partial file. On success the blob appears atomically.
     */
    void download(FileInfo info, String file, Path blob, DownloadProgress progress) throws IOException {
        Path partial = blob.resolveSibling(blob.getFileName() + ".incomplete");
        Files.createDirectories(blob.getParent());
        MessageDigest sha256 = SHA256.matcher(info.etag()).matches() ? newSha256() : null;
        long have = Files.exists(partial) ? Files.size(partial) : 0;
        if (info.size() >= 0 && have > info.size()) {
            Files.delete(partial);
            have = 0;
        }
        if (sha256 != null && have > 0) {
            try (InputStream in = Files.newInputStream(partial)) {
                digest(in, sha256);
            }
        }

        long total = info.size();
        if (total < 0 || have < total) {
            HttpResponse<InputStream> response = get(info.location(), have);
            int status = response.statusCode();
            if (status == 416 && have > 0) {
                // The partial file is no prefix of what the server has now: start over.
                response.body().close();
                Files.delete(partial);
                have = 0;
                if (sha256 != null) sha256.reset();
                response = get(info.location(), 0);
                status = response.statusCode();
            }
            if (status == 200 && have > 0) {
                // The server ignored the Range header and sends everything: start over.
                Files.delete(partial);
                have = 0;
                if (sha256 != null) sha256.reset();
            } else if (status == 206) {
                long start = rangeStart(response);
                if (start != have) {
                    response.body().close();
                    throw new IOException("asked " + info.location() + " for bytes from " + have
                            + " but got a range starting at " + start);
                }
            } else if (status != 200) {
                response.body().close();
                throw statusError(response);
            }
            if (total < 0) {
                long length = response.headers().firstValueAsLong("Content-Length").orElse(-1);
                if (length >= 0) total = have + length;
            }
            progress.start(file, total, have);
            boolean ok = false;
            try (OutputStream out = Files.newOutputStream(partial, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
                have += copyBody(response.body(), out, sha256, progress, Long.MAX_VALUE);
                ok = true;
            } finally {
                progress.finish(ok);
            }
            if (total >= 0 && have != total) {
                throw new NetworkException("the download of " + file + " ended after " + have + " of " + total
                        + " bytes", null);
            }
        }

        if (sha256 != null) {
            String actual = HexFormat.of().formatHex(sha256.digest());
            if (!actual.equals(info.etag())) {
                Files.delete(partial);
                throw new FsException("downloaded " + file + " has sha256 " + actual + " but the hub says "
                        + info.etag() + "; deleted it: run again to download it afresh");
            }
        }
        Files.move(partial, blob, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Bytes {@code from} to {@code from + length - 1} ({@code length} > 0) of a file at {@code location} (its
     * {@link FileInfo#location}), with one HTTP Range request. A server that ignores the Range and sends the whole file is read only as far as
     * needed, then the transfer is dropped. An answer that ends early is a {@link NetworkException}.
     */
    byte[] range(URI location, long from, int length) throws IOException {
        HttpResponse<InputStream> response = get(location, "bytes=" + from + "-" + (from + length - 1));
        int status = response.statusCode();
        long skip = 0;
        if (status == 206) {
            long start = rangeStart(response);
            if (start != from) {
                response.body().close();
                throw new IOException("asked " + location + " for bytes from " + from
                        + " but got a range starting at " + start);
            }
        } else if (status == 200) {
            skip = from;
        } else {
            response.body().close();
            throw statusError(response);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long read = copyBody(response.body(), out, null, null, skip + length);
        if (read < skip + length) {
            throw new NetworkException("the answer for bytes " + from + "-" + (from + length - 1) + " of " + location
                    + " ended after " + Math.max(0, read - skip) + " of " + length + " bytes", null);
        }
        return Arrays.copyOfRange(out.toByteArray(), (int) skip, (int) (skip + length));
    }

    /** GET following redirects by hand; with a Range header when {@code from} > 0. */
    private HttpResponse<InputStream> get(URI uri, long from) throws IOException {
        return get(uri, from > 0 ? "bytes=" + from + "-" : null);
    }

    /** GET following redirects by hand, sending {@code range} as the Range header unless it is null. */
    private HttpResponse<InputStream> get(URI uri, String range) throws IOException {
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            HttpRequest.Builder request = request(uri).GET();
            if (range != null) request.header("Range", range);
            HttpResponse<InputStream> response = send(request, HttpResponse.BodyHandlers.ofInputStream());
            int status = response.statusCode();
            if (status < 300 || status >= 400) return response;
            response.body().close();
            uri = location(response);
        }
        throw new IOException("more than " + MAX_REDIRECTS + " redirects from " + uri);
    }

    private HttpRequest.Builder request(URI uri) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(readTimeout)
                .header("User-Agent", "fs (Java " + Runtime.version().feature() + ")");
        if (token != null && sameOrigin(uri, endpoint)) request.header("Authorization", "Bearer " + token);
        return request;
    }

    private static boolean sameOrigin(URI a, URI b) {
        return Objects.equals(a.getScheme(), b.getScheme()) && Objects.equals(a.getHost(), b.getHost())
                && a.getPort() == b.getPort();
    }

    private <T> HttpResponse<T> send(HttpRequest.Builder request, HttpResponse.BodyHandler<T> handler)
            throws IOException {
        HttpRequest built = request.build();
        try {
            return http.send(built, handler);
        } catch (IOException e) {
            boolean unreachable = e instanceof HttpConnectTimeoutException || e instanceof ConnectException;
            throw new NetworkException(reason(e, built.uri()), e, unreachable);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * Copies a response body, up to {@code limit} bytes, to {@code out} (digesting it when {@code sha256} is not null,
     * reporting to {@code progress} when that is not null), then closes it (which drops a transfer not yet over).
     * HttpClient has no timeout between body bytes, so a watchdog closes the stream when none arrive for the
     * read timeout; the blocked read then fails instead of hanging.
     */
    private long copyBody(InputStream body, OutputStream out, MessageDigest sha256, DownloadProgress progress,
            long limit) throws IOException {
        AtomicLong lastData = new AtomicLong(System.nanoTime());
        AtomicBoolean stalled = new AtomicBoolean();
        long timeoutNanos = readTimeout.toNanos();
        Thread watchdog = Thread.ofVirtual().start(() -> {
            try {
                while (true) {
                    Thread.sleep(Math.max(10, readTimeout.toMillis() / 4));
                    if (System.nanoTime() - lastData.get() > timeoutNanos) {
                        stalled.set(true);
                        body.close();
                        return;
                    }
                }
            } catch (InterruptedException | IOException e) {
                // The copy is over.
            }
        });
        long copied = 0;
        byte[] buffer = new byte[(int) Math.min(1 << 20, Math.max(1, limit))];
        try (body) {
            while (copied < limit) {
                int n;
                try {
                    n = body.read(buffer, 0, (int) Math.min(buffer.length, limit - copied));
                } catch (IOException e) {
                    if (stalled.get()) throw new NetworkException("no data for " + seconds(readTimeout), e);
                    throw new NetworkException("the transfer broke off after " + copied + " bytes: " + reason(e), e);
                }
                if (n < 0) return copied;
                lastData.set(System.nanoTime());
                out.write(buffer, 0, n);
                if (sha256 != null) sha256.update(buffer, 0, n);
                copied += n;
                if (progress != null) progress.advance(n);
            }
            return copied;
        } finally {
            watchdog.interrupt();
        }
    }

    /** One line saying why a request failed, for the user: HttpClient's own messages are often empty. */
    private String reason(IOException e, URI uri) {
        String host = uri.getHost();
        if (e instanceof HttpConnectTimeoutException) return "connecting to " + host + " timed out";
        if (e instanceof HttpTimeoutException) return "no answer from " + host + " in " + seconds(readTimeout);
        if (e instanceof ConnectException) {
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof UnresolvedAddressException) return "cannot resolve the host name " + host;
            }
            return "cannot connect to " + host + (e.getMessage() != null ? ": " + e.getMessage() : "");
        }
        return reason(e);
    }

    private static String reason(IOException e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static StatusException statusError(HttpResponse<?> response) {
        return new StatusException(response.statusCode(), response.uri(),
                response.headers().firstValue("X-Error-Message").orElse(null));
    }

    /** X-Linked-Etag (a large file's sha256) or else ETag, without quotes or weak marker; null when absent. */
    private static String etag(HttpResponse<?> response) throws IOException {
        String raw = response.headers().firstValue("X-Linked-Etag")
                .or(() -> response.headers().firstValue("ETag")).orElse(null);
        if (raw == null) return null;
        String etag = raw.strip();
        if (etag.startsWith("W/")) etag = etag.substring(2);
        etag = etag.replace("\"", "");
        // It becomes a file name in the cache: refuse anything that could be a path.
        if (!ETAG.matcher(etag).matches()) throw new IOException("unusable ETag " + raw + " from " + response.uri());
        return etag;
    }

    private static URI location(HttpResponse<?> response) throws IOException {
        String location = response.headers().firstValue("Location")
                .orElseThrow(() -> new IOException("redirect without a Location from " + response.uri()));
        return response.uri().resolve(location);
    }

    private static long rangeStart(HttpResponse<?> response) throws IOException {
        // Content-Range: bytes START-END/TOTAL
        String range = response.headers().firstValue("Content-Range").orElse("");
        try {
            String spec = range.strip().substring("bytes ".length());
            return Long.parseLong(spec.substring(0, spec.indexOf('-')));
        } catch (RuntimeException e) {
            throw new IOException("unreadable Content-Range '" + range + "' from " + response.uri());
        }
    }

    private static void digest(InputStream in, MessageDigest digest) throws IOException {
        byte[] buffer = new byte[1 << 20];
        int n;
        while ((n = in.read(buffer)) >= 0) digest.update(buffer, 0, n);
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    static String seconds(Duration duration) {
        return String.format(Locale.ROOT, "%.3g s", duration.toMillis() / 1000.0);
    }

    @Override
    public void close() {
        http.close();
    }
}
