package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A streamed answer as server-sent events, OpenAI's way: each event one {@code data: JSON} line and a blank line,
 * written and flushed at once (one HTTP chunk each), and {@code data: [DONE]} at the end. A client that went away
 * shows as an IOException from {@link #send}.
 */
final class EventStream {
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END_OF_EVENT = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private final OutputStream out;

    private EventStream(OutputStream out) {
        this.out = out;
    }

    /** Sends the 200 headers of an event stream (chunked: its length is not known). */
    static EventStream open(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        exchange.getResponseHeaders().set("Cache-Control", "no-cache");
        exchange.sendResponseHeaders(200, 0);
        return new EventStream(exchange.getResponseBody());
    }

    void send(JsonNode event) throws IOException {
        write(Exchanges.JSON.writeValueAsBytes(event));
    }

    /** The last event. */
    void done() throws IOException {
        write("[DONE]".getBytes(StandardCharsets.US_ASCII));
    }

    private void write(byte[] data) throws IOException {
        out.write(DATA);
        out.write(data);
        out.write(END_OF_EVENT);
        out.flush();
    }
}
