package fs.json;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What is wrong with a JSON file, in one line of plain words, from Jackson's exception. Jackson's own messages name
 * its token types (START_OBJECT), its configuration (`StreamReadConstraints.getMaxNestingDepth()`) and its input
 * source; a user can act on none of that, only on what the file holds and where.
 */
public final class JsonMessages {
    private static final Map<String, String> TOKEN_WORDS = Map.ofEntries(
            Map.entry("START_OBJECT", "an object"), Map.entry("END_OBJECT", "the end of an object"),
            Map.entry("START_ARRAY", "an array"), Map.entry("END_ARRAY", "the end of an array"),
            Map.entry("FIELD_NAME", "a key"), Map.entry("VALUE_STRING", "a string"),
            Map.entry("VALUE_NUMBER_INT", "an integer"), Map.entry("VALUE_NUMBER_FLOAT", "a number"),
            Map.entry("VALUE_TRUE", "true"), Map.entry("VALUE_FALSE", "false"), Map.entry("VALUE_NULL", "null"),
            Map.entry("VALUE_EMBEDDED_OBJECT", "a value"), Map.entry("NOT_AVAILABLE", "nothing"));
    private static final Pattern TOKEN_NAME = Pattern.compile("\\b(?:START|END)_(?:OBJECT|ARRAY)\\b|\\bFIELD_NAME\\b"
            + "|\\bVALUE_[A-Z_]+\\b|\\bNOT_AVAILABLE\\b");
    /** Where Jackson says a container started: " (start marker at [Source: ...; line: 1, column: 2])". */
    private static final Pattern SOURCE = Pattern.compile("\\s*\\((?:start marker|for \\w+ starting) at \\[Source:[^\\]]*\\]\\)");
    /** Jackson's advice to turn a feature on, e.g. ": enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow". */
    private static final Pattern FEATURE_ADVICE = Pattern.compile(":?\\s*enable `[^`]*` to allow");

    private JsonMessages() {}

    /** The problem and, when Jackson knows it, the line and column it is at. */
    public static String describe(JsonProcessingException e) {
        String problem = problem(e);
        JsonLocation at = e.getLocation();
        if (at == null || at.getLineNr() < 1) return problem;
        return problem + " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    }

    /** The name of a token type in words: "an object", "a string". */
    public static String words(JsonToken token) {
        return token == null ? "the end of the file" : TOKEN_WORDS.getOrDefault(token.name(), "a value");
    }

    private static String problem(JsonProcessingException e) {
        String message = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        if (e instanceof StreamConstraintsException) return limit(message);
        if (e instanceof JsonEOFException eof) {
            return eof.getTokenBeingDecoded() == null
                    ? "the file ends too early"
                    : "the file ends in the middle of " + words(eof.getTokenBeingDecoded());
        }
        if (message.startsWith("Unexpected end-of-input")) return "the file ends too early";
        if (message.startsWith("Trailing token")) return "more content after the end of the top-level value";
        String plain = FEATURE_ADVICE.matcher(SOURCE.matcher(message).replaceAll("")).replaceAll(" (not allowed in JSON)");
        plain = TOKEN_NAME.matcher(plain).replaceAll(m -> TOKEN_WORDS.getOrDefault(m.group(), "a value"));
        plain = plain.replace("range of long", "range of a 64-bit integer").replace("range of int", "range of a 32-bit integer")
                .replaceAll("`[^`]*`", "").replaceAll("\\s*\\R\\s*", " ").strip();
        return "not valid JSON: " + plain;
    }

    /** One of the reader's size limits, which a file this far off is corrupt or hostile to reach. */
    private static String limit(String message) {
        StreamReadConstraints limits = StreamReadConstraints.defaults();
        if (message.contains("nesting depth")) return "nested more than " + limits.getMaxNestingDepth() + " levels deep";
        if (message.startsWith("Name length")) return "a key longer than " + limits.getMaxNameLength() + " characters";
        if (message.startsWith("String value length")) return "a string longer than " + limits.getMaxStringLength() + " characters";
        if (message.startsWith("Number value length")) return "a number longer than " + limits.getMaxNumberLength() + " digits";
        return "larger than the JSON reader's limits";
    }
}
