package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

/**
 * A streamed answer as newline-delimited JSON, Ollama's way: each object on a line of its own, written and flushed at
 * once (one HTTP chunk each); the stream ends with its last object. A client that went away, or stopped reading for
 * longer than the send timeout, shows as a {@link Exchange.ClientGoneException} from {@link #send}.
 */
final class NdjsonStream {
    private final Exchange exchange;

    NdjsonStream(Exchange exchange) {
        this.exchange = exchange;
    }

    void send(JsonNode object) throws IOException {
        write(object, false);
    }

    /** The last object; the response ends with it. */
    void end(JsonNode object) throws IOException {
        write(object, true);
    }

    private void write(JsonNode object, boolean last) throws IOException {
        byte[] json = Exchange.JSON.writeValueAsBytes(object); // escapes every newline inside strings
        byte[] line = new byte[json.length + 1];
        System.arraycopy(json, 0, line, 0, json.length);
        line[json.length] = '\n';
        exchange.write(last, line);
    }
}
