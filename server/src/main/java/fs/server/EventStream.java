package fs.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A streamed answer as server-sent events, OpenAI's way: each event one {@code data: JSON} line (after an
 * {@code event: NAME} line when it is named) and a blank line, written and flushed at once (one HTTP chunk each), and
 * {@code data: [DONE]} at the end. A client that went away, or
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
        write(DATA, Exchange.JSON.writeValueAsBytes(event), false);
    }

    /**
     * An event with a name: an {@code event: NAME} line before its data, as Anthropic's and the Responses API's typed
     * events come.
     */
    void send(String name, JsonNode event) throws IOException {
        write(("event: " + name + "\ndata: ").getBytes(StandardCharsets.UTF_8), Exchange.JSON.writeValueAsBytes(event),
                false);
    }

    /** The last event; the response ends with it. */
    void done() throws IOException {
        write(DATA, "[DONE]".getBytes(StandardCharsets.US_ASCII), true);
    }

    private void write(byte[] head, byte[] data, boolean last) throws IOException {
        byte[] event = new byte[head.length + data.length + END_OF_EVENT.length];
        System.arraycopy(head, 0, event, 0, head.length);
        System.arraycopy(data, 0, event, head.length, data.length);
        System.arraycopy(END_OF_EVENT, 0, event, head.length + data.length, END_OF_EVENT.length);
        exchange.write(last, event);
    }
}
