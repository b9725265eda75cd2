package fs.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.Callback;

/**
 * The header timeout, which Jetty has not got: its idle timeout restarts with every byte, so a client that sends its
 * headers a byte a second (slowloris) would hold its connection forever. Once a second this looks at every
 * connection whose parser is inside a request's line or headers, and one that began longer than the timeout ago is
 * answered 408 (OpenAI's error object) and closed, as nginx's client_header_timeout does.
 */
final class HeaderDeadline {
    private final ServerConnector connector;
    private final long timeoutNanos;
    private final AccessLog log;
    private final byte[] answer;
    private volatile boolean stopped;

    HeaderDeadline(ServerConnector connector, Duration timeout, AccessLog log) {
        this.connector = connector;
        this.timeoutNanos = timeout.toNanos();
        this.log = log;
        ApiException error = new ApiException(408, "invalid_request_error", "request_timeout", null,
                "the request headers did not arrive within " + timeout.toSeconds() + " s (fs serve --header-timeout)");
        byte[] body = error.body().toString().getBytes(StandardCharsets.UTF_8);
        byte[] head = ("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        answer = new byte[head.length + body.length];
        System.arraycopy(head, 0, answer, 0, head.length);
        System.arraycopy(body, 0, answer, head.length, body.length);
    }

    void start() {
        schedule();
    }

    void stop() {
        stopped = true;
    }

    private void schedule() {
        if (!stopped) connector.getScheduler().schedule(this::sweep, 1, TimeUnit.SECONDS);
    }

    private void sweep() {
        try {
            long now = System.nanoTime();
            for (EndPoint endPoint : connector.getConnectedEndPoints()) {
                if (!(endPoint.getConnection() instanceof HttpConnection http)) continue;
                var parser = http.getParser();
                // START: waiting for a request's first byte, which the idle timeout bounds.
                if (parser.isStart() || !parser.inHeaderState()) continue;
                long began = parser.getBeginNanoTime();
                if (now - began > timeoutNanos) expire(endPoint, (now - began) / 1e9);
            }
        } finally {
            schedule();
        }
    }

    private void expire(EndPoint endPoint, double seconds) {
        try {
            endPoint.write(Callback.from(endPoint::close, failure -> endPoint.close()), ByteBuffer.wrap(answer));
        } catch (RuntimeException e) {
            endPoint.close(); // a write is pending: the headers were complete after all, and a response began
            return;
        }
        log.log(new AccessLog.Entry("-", "-", 408, false, seconds, -1, -1, null,
                "the request headers did not arrive in time"));
    }
}
