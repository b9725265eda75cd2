package fs.generate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Splits an answer's content, arriving in pieces, into text and the function calls Qwen3 writes as
 * {@code <tool_call>\n{"name": …, "arguments": …}\n</tool_call>} blocks. A call opens as soon as its name is
 * written (before its arguments, as the template asks), and its arguments come as the model writes them, its own text,
 * so that a client can show them growing as OpenAI streams them; a block written another way (the arguments first)
 * is read whole once it closes, and one that does not hold a call (not JSON, no name) stays text, as the model wrote
 * it. The whitespace the model puts between its text and a call, and between calls, is layout, not text. What may
 * still turn out to be a tag, the layout before one, or the end of a call, is held back until decided.
 *
 * <p>Shared by {@code fs serve} (message.tool_calls) and the library's chats ({@code fs.api}); not thread-safe: one
 * answer, one thread.
 */
public final class ToolCallSplitter {
    private static final String OPEN = "<tool_call>";
    private static final String CLOSE = "</tool_call>";
    /** A call's start, up to its arguments, as the template writes it (whitespace aside). */
    private static final Pattern NAMED = Pattern.compile(
            "<tool_call>\\s*\\{\\s*\"name\"\\s*:\\s*(\"(?:[^\"\\\\]|\\\\.)*\")\\s*,\\s*\"arguments\"\\s*:\\s*");
    private static final String ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ObjectReader WHOLE_JSON =
            new ObjectMapper().reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** A call found in the answer: OpenAI's id, the function's name and its arguments as the model wrote them. */
    public record Call(String id, String name, String arguments) {}

    /** A piece of the content, in order: text, or a call's opening, more of its arguments, its end. */
    public sealed interface Piece {
        record Text(String text) implements Piece {}

        /** A call begins: its id and name are known, its arguments follow. */
        record Opened(String id, String name) implements Piece {}

        /** More of the open call's arguments (never empty). */
        record Arguments(String fragment) implements Piece {}

        /**
         * The open call ends: its arguments are all the fragments. {@code complete} is false for a call the answer's
         * end cut short (its arguments may not be whole).
         */
        record Closed(Call call, boolean complete) implements Piece {}
    }

    private enum State { TEXT, BLOCK, ARGUMENTS }

    private final HeldBackText pending = new HeldBackText();
    private State state = State.TEXT;
    private boolean afterCall; // whitespace after a call is dropped until text starts
    private String id; // of the open call
    private String name;
    private final StringBuilder arguments = new StringBuilder(); // of the open call, as sent so far

    /** What the content pushed so far adds, in order. */
    public List<Piece> push(String content) {
        pending.append(content);
        List<Piece> pieces = new ArrayList<>();
        while (true) {
            switch (state) {
                case TEXT -> {
                    int open = pending.indexOf(OPEN, 0);
                    if (open < 0) {
                        text(pending.takeAllBut(heldBackInText()), pieces);
                        return pieces;
                    }
                    text(pending.take(open).stripTrailing(), pieces);
                    state = State.BLOCK;
                }
                case BLOCK -> {
                    int close = pending.indexOf(CLOSE, 0);
                    Matcher named = NAMED.matcher(pending.toString());
                    String calledName = named.lookingAt() && (close < 0 || named.end() <= close)
                            ? string(named.group(1)) : null;
                    if (calledName != null) {
                        open(calledName, pieces);
                        pending.drop(named.end());
                        state = State.ARGUMENTS;
                    } else if (close >= 0) {
                        String block = pending.take(close + CLOSE.length());
                        state = State.TEXT;
                        if (!wholeCall(block.substring(OPEN.length(), close), pieces)) text(block, pieces);
                    } else {
                        return pieces;
                    }
                }
                case ARGUMENTS -> {
                    if (arguments.isEmpty()) { // the layout before the arguments may come in a piece of its own
                        int start = 0;
                        while (start < pending.length() && Character.isWhitespace(pending.charAt(start))) start++;
                        pending.drop(start);
                    }
                    int close = pending.indexOf(CLOSE, 0);
                    if (close < 0) {
                        fragment(pending.takeAllBut(heldBackInArguments()), pieces);
                        return pieces;
                    }
                    String rest = pending.take(close);
                    pending.drop(CLOSE.length());
                    close(withoutClosingBrace(arguments + rest), true, pieces);
                    state = State.TEXT;
                }
            }
        }
    }

    /**
     * The rest, at the end of the answer: a block that never got its name is text, as the model wrote it; a call
     * cut short ends with the arguments it has.
     */
    public List<Piece> flush() {
        List<Piece> pieces = new ArrayList<>();
        int partialClose = pending.partialMarker(List.of(CLOSE));
        String rest = pending.takeAll();
        switch (state) {
            case TEXT, BLOCK -> text(rest, pieces);
            case ARGUMENTS -> close(cutShort(arguments + rest.substring(0, rest.length() - partialClose)), false,
                    pieces);
        }
        state = State.TEXT;
        return pieces;
    }

    private void open(String calledName, List<Piece> pieces) {
        id = newId();
        name = calledName;
        arguments.setLength(0);
        pieces.add(new Piece.Opened(id, name));
    }

    private void fragment(String fragment, List<Piece> pieces) {
        if (fragment.isEmpty()) return;
        arguments.append(fragment);
        pieces.add(new Piece.Arguments(fragment));
    }

    /** Ends the open call with {@code all} its arguments, sending what of them was not sent yet. */
    private void close(String all, boolean complete, List<Piece> pieces) {
        // What was sent is always a beginning of all: only what may be the call's end was held back.
        fragment(all.substring(Math.min(arguments.length(), all.length())), pieces);
        pieces.add(new Piece.Closed(new Call(id, name, all), complete));
        afterCall = true;
    }

    /** A block whose name did not come first: a call when it is JSON with a name. */
    private boolean wholeCall(String body, List<Piece> pieces) {
        JsonNode call;
        try {
            call = WHOLE_JSON.readTree(body);
        } catch (JsonProcessingException e) {
            return false;
        }
        if (call == null || !call.isObject() || !call.path("name").isTextual()) return false;
        JsonNode given = call.get("arguments");
        open(call.get("name").textValue(), pieces);
        close(given == null || given.isNull() ? "{}" : given.toString(), true, pieces);
        return true;
    }

    private void text(String text, List<Piece> pieces) {
        if (afterCall) {
            text = text.stripLeading();
            if (text.isEmpty()) return;
            afterCall = false;
        }
        if (!text.isEmpty()) pieces.add(new Piece.Text(text));
    }

    /** The tail of pending that may still become the opening tag, or the whitespace before one. */
    private int heldBackInText() {
        int keep = pending.partialMarker(List.of(OPEN));
        while (keep < pending.length() && Character.isWhitespace(pending.charAt(pending.length() - keep - 1))) keep++;
        return keep;
    }

    /** The tail of the arguments that may still be the call's end: whitespace, its closing brace, the closing tag. */
    private int heldBackInArguments() {
        int end = pending.length() - pending.partialMarker(List.of(CLOSE));
        end = skipWhitespaceBack(end);
        if (end > 0 && pending.charAt(end - 1) == '}') end = skipWhitespaceBack(end - 1);
        return pending.length() - end;
    }

    private int skipWhitespaceBack(int end) {
        while (end > 0 && Character.isWhitespace(pending.charAt(end - 1))) end--;
        return end;
    }

    /**
     * The arguments of a call the answer's end cut short (a closing tag begun after them left out): JSON as they are;
     * else, when the cut came after the brace that closes the call's object, without it; else (cut inside them) as
     * they are.
     */
    private static String cutShort(String text) {
        if (isJson(text)) return text;
        String withoutBrace = withoutClosingBrace(text);
        return isJson(withoutBrace) ? withoutBrace : text;
    }

    private static boolean isJson(String text) {
        try {
            return WHOLE_JSON.readTree(text) != null;
        } catch (JsonProcessingException e) {
            return false;
        }
    }

    /** The arguments without the brace (and layout) that closes the call's object. */
    private static String withoutClosingBrace(String text) {
        String trimmed = text.stripTrailing();
        if (trimmed.endsWith("}")) trimmed = trimmed.substring(0, trimmed.length() - 1).stripTrailing();
        return trimmed;
    }

    /** A JSON string literal's value; null when it is not one. */
    private static String string(String literal) {
        try {
            JsonNode node = WHOLE_JSON.readTree(literal);
            return node != null && node.isTextual() ? node.textValue() : null;
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /** An id like OpenAI's: "call_" and 24 random letters and digits. */
    private static String newId() {
        StringBuilder id = new StringBuilder("call_");
        for (int i = 0; i < 24; i++) id.append(ID_CHARS.charAt(RANDOM.nextInt(ID_CHARS.length())));
        return id.toString();
    }
}
