package fs.chat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits an answer's content, arriving in pieces, into text and the function calls Qwen3 writes as
 * {@code <tool_call>\n{"name": …, "arguments": …}\n</tool_call>} blocks. A block is held back until it closes; one
 * that does not hold a call (not JSON, no name) stays text, as the model wrote it. The whitespace the model puts
 * between its text and a call, and between calls, is layout, not text. Text that may be the start of a tag, or
 * whitespace that may come before a call, is held back until decided.
 *
 * <p>Shared by {@code fs serve} (message.tool_calls) and the library's chats ({@code fs.api}); not thread-safe: one
 * answer, one thread.
 */
public final class ToolCallSplitter {
    private static final String OPEN = "<tool_call>";
    private static final String CLOSE = "</tool_call>";
    private static final String ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ObjectReader WHOLE_JSON =
            new ObjectMapper().reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** A call found in the answer: OpenAI's id, the function's name and its arguments as a JSON text. */
    public record Call(String id, String name, String arguments) {}

    /** A piece of the content, in order: text or a call. */
    public sealed interface Piece {
        record Text(String text) implements Piece {}

        record Found(Call call) implements Piece {}
    }

    private final StringBuilder pending = new StringBuilder();
    private boolean inCall;
    private boolean afterCall; // whitespace after a call is dropped until text starts

    /** What the content pushed so far adds: text and the calls that closed, in order. */
    public List<Piece> push(String content) {
        pending.append(content);
        List<Piece> pieces = new ArrayList<>();
        while (true) {
            if (inCall) {
                int close = pending.indexOf(CLOSE);
                if (close < 0) return pieces;
                String block = pending.substring(0, close + CLOSE.length());
                pending.delete(0, close + CLOSE.length());
                inCall = false;
                Call call = parse(block.substring(OPEN.length(), close));
                if (call != null) {
                    pieces.add(new Piece.Found(call));
                    afterCall = true;
                } else {
                    text(block, pieces);
                }
                continue;
            }
            int open = pending.indexOf(OPEN);
            if (open >= 0) {
                text(pending.substring(0, open).stripTrailing(), pieces);
                pending.delete(0, open);
                inCall = true;
                continue;
            }
            int keep = heldBack();
            text(pending.substring(0, pending.length() - keep), pieces);
            pending.delete(0, pending.length() - keep);
            return pieces;
        }
    }

    /** The rest, at the end of the answer: a block that never closed is text, as the model wrote it. */
    public List<Piece> flush() {
        List<Piece> pieces = new ArrayList<>();
        text(pending.toString(), pieces);
        pending.setLength(0);
        inCall = false;
        return pieces;
    }

    private void text(String text, List<Piece> pieces) {
        if (afterCall) {
            text = text.stripLeading();
            if (text.isEmpty()) return;
            afterCall = false;
        }
        if (!text.isEmpty()) pieces.add(new Piece.Text(text));
    }

    /** The tail of pending that may still become a tag's start or the whitespace before one. */
    private int heldBack() {
        int partial = 0;
        for (int n = Math.min(OPEN.length() - 1, pending.length()); n > 0; n--) {
            if (pending.length() >= n && pending.substring(pending.length() - n).equals(OPEN.substring(0, n))) {
                partial = n;
                break;
            }
        }
        int keep = partial;
        while (keep < pending.length() && Character.isWhitespace(pending.charAt(pending.length() - keep - 1))) keep++;
        return keep;
    }

    /** The call in a block's body, or null when it holds none. */
    private static Call parse(String body) {
        JsonNode call;
        try {
            call = WHOLE_JSON.readTree(body);
        } catch (JsonProcessingException e) {
            return null;
        }
        if (call == null || !call.isObject()) return null;
        JsonNode name = call.get("name");
        if (name == null || !name.isTextual()) return null;
        JsonNode arguments = call.get("arguments");
        String json;
        if (arguments == null || arguments.isNull()) {
            json = "{}";
        } else if (arguments.isTextual()) {
            json = arguments.textValue(); // some models write the arguments as a string already
        } else {
            json = arguments.toString();
        }
        return new Call(newId(), name.textValue(), json);
    }

    /** An id like OpenAI's: "call_" and 24 random letters and digits. */
    private static String newId() {
        StringBuilder id = new StringBuilder("call_");
        for (int i = 0; i < 24; i++) id.append(ID_CHARS.charAt(RANDOM.nextInt(ID_CHARS.length())));
        return id.toString();
    }
}
