package fs.server;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.Locale;

/**
 * The server's log: one line per request, plain ({@code fs: POST /v1/completions 200 (0.412 s), …}) or one JSON
 * object. Everything in a line that came from a client (path, model, the messages that quote them) is escaped, so
 * that a line is always exactly one line and no request can write a line of its own into the log.
 */
final class AccessLog {
    /**
     * One request's line.
     *
     * @param method           the request method, or "-" when the request line could not be read
     * @param path             the decoded path, or "-"
     * @param status           the status sent; -1 when none was (the client went away)
     * @param cancelled        the client went away before its answer was complete, which cancelled the generation
     * @param seconds          from the request's arrival to its end
     * @param promptTokens     of a completion request, else -1
     * @param completionTokens of a completion request, else -1
     * @param finishReason     of a completion request that finished, else null
     * @param error            why it failed, else null
     */
    record Entry(String method, String path, int status, boolean cancelled, double seconds, int promptTokens,
                 int completionTokens, String finishReason, String error) {}

    private final PrintWriter out;
    private final boolean json;

    AccessLog(PrintWriter out, boolean json) {
        this.out = out;
        this.json = json;
    }

    void log(Entry entry) {
        String line = json ? jsonLine(entry) : plainLine(entry);
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    private static String plainLine(Entry entry) {
        StringBuilder line = new StringBuilder("fs: ");
        line.append(entry.method).append(' ').append(entry.path).append(' ')
                .append(entry.cancelled ? "cancelled" : entry.status < 0 ? "-" : Integer.toString(entry.status))
                .append(String.format(Locale.ROOT, " (%.3f s)", entry.seconds));
        if (entry.promptTokens >= 0) {
            line.append(String.format(Locale.ROOT, ", %d prompt + %d generated tokens", entry.promptTokens,
                    entry.completionTokens));
            if (entry.error == null) line.append(", ").append(entry.finishReason != null ? entry.finishReason : "cut");
        }
        if (entry.error != null) line.append(": ").append(entry.error);
        return oneLine(line.toString());
    }

    private static String jsonLine(Entry entry) {
        ObjectNode line = JsonNodeFactory.instance.objectNode();
        line.put("time", Instant.now().toString());
        line.put("method", entry.method);
        line.put("path", entry.path);
        if (entry.status >= 0) line.put("status", entry.status);
        else line.putNull("status");
        line.put("cancelled", entry.cancelled);
        line.put("seconds", Math.round(entry.seconds * 1e6) / 1e6);
        if (entry.promptTokens >= 0) {
            line.put("prompt_tokens", entry.promptTokens);
            line.put("completion_tokens", entry.completionTokens);
            line.put("finish_reason", entry.finishReason);
        }
        if (entry.error != null) line.put("error", entry.error);
        // Jackson escapes the C0 controls, not C1 ones, U+2028 or U+2029, which some log viewers take for line ends.
        return oneLine(line.toString());
    }

    /**
     * {@code text} with every character that could end or disguise a line (control characters, line and paragraph
     * separators, invisible format characters such as bidi overrides) written as {@code \r}, {@code \n},
     * {@code \t} or {@code \\uNNNN}, as {@link fs.Quoted} shows them in messages (and as JSON writes them: inside
     * a JSON line this changes only what Jackson leaves raw).
     */
    static String oneLine(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean escape = Character.isISOControl(c) || c == '\u2028' || c == '\u2029'
                    || Character.getType(c) == Character.FORMAT;
            if (escape && out == null) out = new StringBuilder(text.length() + 16).append(text, 0, i);
            if (out == null) continue;
            if (c == '\r') out.append("\\r");
            else if (c == '\n') out.append("\\n");
            else if (c == '\t') out.append("\\t");
            else if (escape) out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            else out.append(c);
        }
        return out == null ? text : out.toString();
    }
}
