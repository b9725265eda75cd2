package fs.server;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The errors Jetty answers itself, before a request reaches the server's handler (a malformed request line, URI or
 * header, a bad Content-Length or Transfer-Encoding, headers too large...): answered as OpenAI's error object with
 * the status Jetty chose, never Jetty's HTML page, and logged like any request.
 */
final class JsonErrorHandler extends ErrorHandler {
    /** The path of the request Jetty makes up for a request whose line or headers it could not read. */
    private static final String UNREAD_REQUEST = "/badMessage";

    private final AccessLog log;

    JsonErrorHandler(AccessLog log) {
        this.log = log;
    }

    /** Every method's error gets its JSON and its log line (Jetty's writes a page for GET, POST and HEAD only). */
    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
                                    Callback callback) {
        if (cause instanceof Exchange.ClientGoneException) { // the server's handler logged it, and no one listens
            callback.failed(cause);
            return;
        }
        ApiException error = Exchange.protocolError(code, message);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONNECTION, "close"); // where the next request starts is unknown
        response.write(true, ByteBuffer.wrap(error.body().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                callback);
        String path = request.getHttpURI().getPath(); // null for CONNECT's host:port
        boolean unread = UNREAD_REQUEST.equals(path);
        log.log(new AccessLog.Entry(unread ? "-" : request.getMethod(), unread || path == null ? "-" : path, code, false,
                (System.nanoTime() - request.getBeginNanoTime()) / 1e9, -1, -1, null, error.getMessage()));
    }
}
