package fs.server;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import fs.FsException;
import fs.json.StrictJson;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;

/**
 * One request and its response, in blocking calls on the request's virtual thread over Jetty's asynchronous core:
 * reading the body (under the body timeout), writing whole responses and events (under the send timeout), and asking
 * whether the client is still there. Reads and writes that fail say why: a client that went away is an
 * {@link ClientGoneException}; a malformed body or a timeout is an {@link ApiException} to answer.
 */
final class Exchange {
    static final ObjectMapper JSON = new ObjectMapper();
    /** Reads one JSON value that must be all of its text (JSON inside a request's strings, or a model's answer). */
    static final ObjectReader WHOLE_JSON = JSON.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** The client closed the connection, or it broke, or it stopped reading for longer than the send timeout. */
    static final class ClientGoneException extends IOException {
        ClientGoneException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Request request;
    private final Response response;
    private final Callback callback;
    private final ServerConfig.Timeouts timeouts;
    private final EndPoint endPoint;
    private boolean completed;
    private ErrorShape errorShape = ApiException::body;
    private int status = -1; // the status sent
    private boolean pipelined; // the probe read bytes of a next request: the connection closes after this one

    Exchange(Request request, Response response, Callback callback, ServerConfig.Timeouts timeouts) {
        this.request = request;
        this.response = response;
        this.callback = callback;
        this.timeouts = timeouts;
        this.endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
        // While the answer is generated nothing is read or written: that silence is not the client's, so the idle
        // timeout is ignored then. A read or write in progress still fails on it (Jetty fails them before asking).
        request.addIdleTimeoutListener(timeout -> false);
    }

    String method() {
        return request.getMethod();
    }

    /** The decoded path, without the query. */
    String path() {
        return Request.getPathInContext(request);
    }

    String header(String name) {
        return request.getHeaders().get(name);
    }

    int headerCount() {
        return request.getHeaders().size();
    }

    boolean hasHeader(HttpHeader header) {
        return request.getHeaders().contains(header);
    }

    void setHeader(String name, String value) {
        response.getHeaders().put(name, value);
    }

    /** The status sent (or being sent), or -1 before the response started. */
    int status() {
        return status;
    }

    /** The request body as a JSON object; too large (413), malformed or not a JSON object (400), is refused. */
    JsonNode readJsonObject(int maxBytes) throws IOException {
        long declared = request.getLength(); // -1: chunked (Jetty has refused a malformed Content-Length)
        if (declared > maxBytes) throw tooLarge(maxBytes); // refused before a byte of it is read
        byte[] body = RequestBody.read(request, endPoint, maxBytes, timeouts.bodyRate());
        if (body.length > maxBytes) throw tooLarge(maxBytes);
        try {
            return StrictJson.parseObject(body, 0, body.length, "the request body");
        } catch (FsException e) {
            throw new ApiException(400, "invalid_request_error", "invalid_json", null, e.getMessage());
        }
    }

    private static ApiException tooLarge(int maxBytes) {
        return new ApiException(413, "invalid_request_error", "request_too_large", null,
                "the request body is larger than " + maxBytes + " bytes, the most this server reads");
    }

    /**
     * Whether the client has gone: it closed its end (or the connection broke) since the body was read. Only once the
     * whole body is read, and without blocking: it reads what the socket holds, which for an HTTP/1.1 client that
     * waits for its answer is nothing, or the end of the stream when it closed. A client that pipelines a next request
     * loses it (those bytes are read here) and sees this response close the connection, which such a client must
     * handle by sending it again; browsers and HTTP libraries do not pipeline.
     */
    boolean clientGone() {
        if (!endPoint.isOpen() || endPoint.isInputShutdown()) return true;
        if (pipelined) return false;
        try {
            ByteBuffer probe = ByteBuffer.allocate(256).flip(); // flush mode, empty: what fill appends to
            int read = endPoint.fill(probe);
            if (read > 0) {
                pipelined = true;
                if (!response.isCommitted()) response.getHeaders().put(HttpHeader.CONNECTION, "close");
            }
            return read < 0;
        } catch (IOException e) {
            return true;
        }
    }

    void sendJson(int status, JsonNode body) throws IOException {
        send(status, "application/json", JSON.writeValueAsBytes(body));
    }

    void sendText(int status, String contentType, String body) throws IOException {
        send(status, contentType, body.getBytes(StandardCharsets.UTF_8));
    }

    /** The request is one of an API whose errors have {@code shape} (OpenAI's until this is called). */
    void speaks(ErrorShape shape) {
        this.errorShape = shape;
    }

    /** The error object in the request's API's shape, with its status; a 503 says when to retry. */
    void sendError(ApiException error) throws IOException {
        if (error.status == 503) setHeader("Retry-After", "1");
        // The body was not read (413), or the request cannot be trusted to have ended where the parser thinks.
        if (error.status == 413 || error.status == 400 || error.status == 408) {
            response.getHeaders().put(HttpHeader.CONNECTION, "close");
        }
        sendJson(error.status, errorShape.body(error));
    }

    private void send(int status, String contentType, byte[] body) throws IOException {
        this.status = status;
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        write(true, body);
    }

    /** Sends the 200 headers of an event stream (chunked: its length is not known), then its events. */
    EventStream openEventStream() throws IOException {
        startStream("text/event-stream; charset=utf-8");
        return new EventStream(this);
    }

    /** Sends the 200 headers of a newline-delimited JSON stream (chunked), then its objects. */
    NdjsonStream openNdjsonStream() throws IOException {
        startStream("application/x-ndjson");
        return new NdjsonStream(this);
    }

    private void startStream(String contentType) throws IOException {
        status = 200;
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        write(false, new byte[0]); // the headers go now: a client sees the stream start before the first token
    }

    /** Writes and flushes {@code bytes} (one HTTP chunk when chunked), the response's last with {@code last}. */
    void write(boolean last, byte[] bytes) throws IOException {
        endPoint.setIdleTimeout(timeouts.send().toMillis()); // from the first write on, a stalled reader has this long
        try (Blocker.Callback written = Blocker.callback()) {
            response.write(last, ByteBuffer.wrap(bytes), written);
            written.block();
        } catch (IOException e) {
            throw new ClientGoneException(stalled(e) ? "the client did not read the answer for "
                    + timeouts.send().toSeconds() + " s (fs serve --send-timeout)"
                    : "the client went away (" + describe(e) + ")", e);
        }
        if (last) complete();
    }

    /** Ends the exchange: the response is complete (a stream without its last write ends with its last chunk). */
    void complete() {
        if (completed) return;
        completed = true;
        callback.succeeded();
    }

    /**
     * Ends the exchange of a client that went away: the connection is closed (so Jetty's error handler, which the
     * failure reaches, has no one to write to and does not log it).
     */
    void abort(IOException cause) {
        if (completed) return;
        completed = true;
        endPoint.close(cause);
        callback.failed(cause);
    }

    boolean completed() {
        return completed;
    }

    /** Whether a write failed because the client read nothing for the send timeout. */
    private static boolean stalled(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof TimeoutException) return true;
        }
        return false;
    }

    /** An error the HTTP layer found, as OpenAI's error object: its status, and a code that names it. */
    static ApiException protocolError(int status, String reason) {
        if (status == 426) { // Jetty's answer to HTTP/2's preface, sent without TLS to a server that has no h2c
            return new ApiException(426, "invalid_request_error", "http2_not_supported", null, "bad HTTP request: "
                    + "this server speaks HTTP/1.1 only (for HTTP/2, put a reverse proxy in front)");
        }
        if (status == 505) { // the client's fault, though a 5xx
            return new ApiException(505, "invalid_request_error", "http_version_not_supported", null,
                    "bad HTTP request: " + (reason == null ? "" : reason + ": ")
                            + "this server speaks HTTP/1.1 and HTTP/1.0");
        }
        String code = switch (status) {
            case 408 -> "request_timeout";
            case 411 -> "length_required";
            case 413 -> "request_too_large";
            case 414 -> "uri_too_long";
            case 415 -> "unsupported_media_type";
            case 431 -> "request_header_fields_too_large";
            case 501 -> "not_implemented";
            default -> status >= 500 ? "internal_error" : "invalid_request";
        };
        String message = reason == null || reason.isBlank() ? "the HTTP request is malformed" : reason;
        return new ApiException(status, status >= 500 ? "server_error" : "invalid_request_error", code, null,
                "bad HTTP request: " + message);
    }

    static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getMessage() == null) root = root.getCause();
        return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
    }
}
