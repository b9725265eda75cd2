package fs.fuzz;

import fs.FsException;
import java.util.regex.Pattern;

/**
 * What every loader promises for any input: it loads, or it throws one {@link FsException} whose message is one line
 * of plain words naming the file. Anything else (another exception, an Error, a message with a line break or with
 * Java's or Jackson's internals in it) breaks the promise; so does taking too long, which the campaign checks.
 */
public final class LoaderContract {
    /** Past this a message is no longer a line a user reads: it is echoing the file back. */
    static final int MAX_MESSAGE_LENGTH = 1000;

    /** Class names, exception types and Jackson's token and limit names: internals a user cannot act on. */
    private static final Pattern INTERNALS = Pattern.compile(
            "\\b(?:java|javax|jdk|sun|com\\.fasterxml)\\.[a-z]\\w*\\."
                    + "|(?:Exception|Error)\\b"
                    + "|\\b(?:START|END)_(?:OBJECT|ARRAY)\\b|\\bFIELD_NAME\\b|\\bVALUE_[A-Z_]+\\b|\\bNOT_AVAILABLE\\b"
                    + "|StreamReadConstraints|\\bgetMax\\w*\\(|\\[Source:|\\$\\{");

    private LoaderContract() {}

    /** Null when the outcome keeps the promise, else what is wrong with it. */
    public static String violation(Throwable thrown, String fileName) {
        if (thrown == null) return null;
        if (!(thrown instanceof FsException)) return "threw " + thrown.getClass().getName() + ": " + thrown.getMessage();
        String message = thrown.getMessage();
        if (message == null || message.isBlank()) return "an FsException without a message";
        if (message.length() > MAX_MESSAGE_LENGTH) {
            return "a message of " + message.length() + " characters: " + message.substring(0, 200) + "…";
        }
        if (message.indexOf('\n') >= 0 || message.indexOf('\r') >= 0) return "a message of more than one line: " + message;
        if (INTERNALS.matcher(message).find()) return "a message with Java internals in it: " + message;
        if (!message.contains(fileName)) return "a message that does not name " + fileName + ": " + message;
        return null;
    }
}
