package fs.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Request;

/**
 * Reads a request body on the request's thread under two clocks: the body timeout bounds each pause (Jetty's idle
 * timeout fails the waiting read), and the {@link ServerConfig.BodyRate} the whole body, so a client that sends a
 * byte just before each pause runs out is cut too. A read that fails says why, as the answer to send: a timeout (408),
 * a malformed body naming what is wrong with it (400), or a client that went away.
 */
final class RequestBody {
    private RequestBody() {}

    /**
     * The body's bytes, up to {@code maxBytes + 1} (one more tells the caller it is too large; the rest is not read).
     *
     * @throws ApiException the answer to a body that is malformed or too slow
     * @throws Exchange.ClientGoneException the client closed the connection or it broke
     */
    static byte[] read(Request request, EndPoint endPoint, int maxBytes, ServerConfig.BodyRate rate)
            throws IOException {
        long start = System.nanoTime();
        long declared = request.getLength();
        ByteArrayOutputStream body = new ByteArrayOutputStream(declared >= 0 ? (int) declared : 1024);
        while (true) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                awaitMore(request, rate.deadlineNanos(start, body.size()), start, body.size(), rate);
                continue;
            }
            if (Content.Chunk.isFailure(chunk)) {
                Throwable failure = chunk.getFailure();
                ApiException answer = answer(failure, endPoint, body.size(), declared);
                if (answer != null) throw answer;
                throw new Exchange.ClientGoneException("the client went away while sending its body ("
                        + Exchange.describe(failure) + ")", failure);
            }
            boolean last = chunk.isLast();
            ByteBuffer bytes = chunk.getByteBuffer();
            int take = Math.min(bytes.remaining(), maxBytes + 1 - body.size());
            byte[] copy = new byte[take];
            bytes.get(copy);
            body.write(copy, 0, take);
            chunk.release();
            if (last || body.size() > maxBytes) return body.toByteArray();
        }
    }

    /** Waits until more of the body can be read, or refuses it once it falls behind the rate. */
    private static void awaitMore(Request request, long deadlineNanos, long start, long received,
                                  ServerConfig.BodyRate rate) throws IOException {
        long wait = deadlineNanos - System.nanoTime();
        boolean more = false;
        if (wait > 0) {
            CountDownLatch demanded = new CountDownLatch(1);
            request.demand(demanded::countDown); // also called when the read fails (a pause past the body timeout)
            try {
                more = demanded.await(wait, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while reading the request body");
            }
        }
        if (!more) {
            double seconds = (System.nanoTime() - start) / 1e9;
            throw new ApiException(408, "invalid_request_error", "request_timeout", null, String.format(
                    "the request body arrived too slowly: %d bytes in %.0f s (a body may take %d s, then must keep up "
                            + "%d bytes a second)", received, seconds, rate.grace().toSeconds(), rate.bytesPerSecond()));
        }
    }

    /** The answer to a failed read: a malformed body or a timeout; null when the client went away (no one to answer). */
    private static ApiException answer(Throwable failure, EndPoint endPoint, long received, long declared) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof TimeoutException) {
                return new ApiException(408, "invalid_request_error", "request_timeout", null,
                        "the request body did not arrive in time (fs serve --body-timeout)");
            }
            if (cause instanceof HttpException http) {
                String framing = BodyFramingParser.failureOn(endPoint);
                if (framing != null) return Exchange.protocolError(http.getCode(), framing);
                if (cause instanceof EofException) { // Jetty's "Early EOF": the connection closed inside the body
                    return Exchange.protocolError(400, declared >= 0
                            ? "the body ended after " + received + " of its " + declared + " bytes (Content-Length)"
                            : "the chunked body ended before its last, empty chunk");
                }
                return Exchange.protocolError(http.getCode(), http.getReason());
            }
        }
        return null;
    }
}
