package fs.server;

import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * Jetty's HTTP/1.1 parser, remembering why a request body's framing broke: once the headers are complete Jetty reports
 * every parse error as an early EOF ("Early EOF"), dropping the reason, so a client whose chunked body is malformed
 * would not learn what is wrong with it. {@link #connectionFactory} makes the connections that parse with it.
 */
final class BodyFramingParser extends HttpParser {
    private volatile String failure; // null: the framing did not break
    private volatile boolean afterChunkData; // the last chunk's data has been read: a CRLF must follow

    private BodyFramingParser(HttpParser.RequestHandler handler, HttpConfiguration http, HttpCompliance compliance) {
        super(handler, http.getRequestHeaderSize(), compliance);
        setHeaderCacheSize(http.getHeaderCacheSize());
        setHeaderCacheCaseSensitive(http.isHeaderCacheCaseSensitive());
    }

    /** HTTP/1.1 connections configured by {@code http} whose parser is this one. */
    static HttpConnectionFactory connectionFactory(HttpConfiguration http) {
        return new HttpConnectionFactory(http) {
            @Override
            public Connection newConnection(Connector connector, EndPoint endPoint) {
                HttpConnection connection = new HttpConnection(getHttpConfiguration(), connector, endPoint) {
                    @Override
                    protected HttpParser newHttpParser(HttpCompliance compliance) {
                        // Jetty's own parser only lends its request handler, which is private to the connection.
                        HttpParser plain = super.newHttpParser(compliance);
                        return new BodyFramingParser((HttpParser.RequestHandler) plain.getHandler(),
                                getHttpConfiguration(), compliance);
                    }
                };
                connection.setUseInputDirectByteBuffers(isUseInputDirectByteBuffers());
                connection.setUseOutputDirectByteBuffers(isUseOutputDirectByteBuffers());
                return configure(connection, connector, endPoint);
            }
        };
    }

    /** Why the framing of the body being read on {@code endPoint} broke, in plain words; null if it did not. */
    static String failureOn(EndPoint endPoint) {
        return endPoint.getConnection() instanceof HttpConnection http && http.getParser() instanceof BodyFramingParser
                parser ? parser.failure : null;
    }

    @Override
    protected void setState(State state) {
        if (state == State.CHUNK_END || state == State.CHUNKED_CONTENT) afterChunkData = getState() == State.CHUNK;
        super.setState(state);
    }

    @Override
    protected void badMessage(HttpException x) {
        if (inContentState() || getState() == State.TRAILER) failure = describe(getState(), x);
        super.badMessage(x);
    }

    private String describe(State state, HttpException x) {
        String found = x.getReason() != null ? " (" + x.getReason() + ")" : "";
        return switch (state) {
            case CHUNKED_CONTENT, CHUNK_SIZE, CHUNK_END -> x.getCode() == 413
                    ? "a chunk size is too large" + found
                    : afterChunkData
                    ? "a chunk's data is not followed by CRLF and the next chunk's size in hex digits" + found
                    : "a chunk size is not hex digits ended by CRLF" + found;
            case TRAILER -> "a trailer field after the last chunk is malformed" + found;
            default -> "the body is malformed" + found;
        };
    }
}
