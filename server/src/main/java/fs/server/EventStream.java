package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A streamed answer as server-sent events, OpenAI's way: each event one {@code data: JSON} line and a blank line,
 * written and flushed at once (one HTTP chunk each), and {@code data: [DONE]} at the end. A client that went away, or
 * stopped reading for longer than the send timeout, shows as a {@link Exchange.ClientGoneException} from
 * {@link #send}.
 */
final class EventStream {
    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END_OF_EVENT = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private final Exchange exchange;

    EventStream(Exchange exchange) {
        this.exchange = exchange;
    }

    void send(JsonNode event) throws IOException {
        write(Exchange.JSON.writeValueAsBytes(event), false);
    }

    /** The last event; the response ends with it. */
    void done() throws IOException {
        write("[DONE]".getBytes(StandardCharsets.US_ASCII), true);
    }

    private void write(byte[] data, boolean last) throws IOException {
        byte[] event = new byte[DATA.length + data.length + END_OF_EVENT.length];
        System.arraycopy(DATA, 0, event, 0, DATA.length);
        System.arraycopy(data, 0, event, DATA.length, data.length);
        System.arraycopy(END_OF_EVENT, 0, event, DATA.length + data.length, END_OF_EVENT.length);
        exchange.write(last, event);
    }
}
