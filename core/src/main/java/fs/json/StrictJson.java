package fs.json;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import fs.FsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the JSON of checkpoints (safetensors headers, index and config files) strictly: a duplicate key or trailing
 * garbage is an error rather than a silent "last one wins", and every failure becomes one line naming the file.
 */
public final class StrictJson {
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    // Jackson's wording of the syntax errors a hand-edited file most often has, reworded in describe().
    private static final Pattern UNCLOSED = Pattern.compile(
            "Unexpected end-of-input: expected close marker for (Object|Array) \\(start marker at \\[line: (\\d+), column: (\\d+)\\]\\).*");
    private static final Pattern MISCLOSED = Pattern.compile(
            "Unexpected close marker '(.)': expected '(.)' \\(for (Object|Array) starting at \\[line: (\\d+), column: (\\d+)\\]\\).*");
    private static final Pattern NON_STANDARD = Pattern.compile("Non-standard token '([^']*)'.*");

    private StrictJson() {}

    /** Reads a whole JSON file that must hold an object, refusing files over {@code maxBytes} before reading them. */
    public static JsonNode readObjectFile(Path file, long maxBytes) {
        long size;
        byte[] bytes;
        try {
            if (Files.isDirectory(file)) throw new FsException(file + ": is a directory, expected a JSON file");
            size = Files.size(file);
            if (size > maxBytes) {
                throw new FsException(file + ": " + size + " bytes is too large for this JSON file (at most "
                        + maxBytes + ")");
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new FsException(file + ": no such file");
        } catch (IOException e) {
            throw new FsException(file + ": cannot read: " + e.getMessage());
        }
        return parseObject(bytes, 0, bytes.length, file.toString());
    }

    /** Parses {@code length} bytes at {@code offset} as a JSON object; {@code source} names them in errors. */
    public static JsonNode parseObject(byte[] bytes, int offset, int length, String source) {
        JsonNode root;
        try {
            root = MAPPER.readTree(bytes, offset, length);
        } catch (JacksonException e) {
            throw new FsException(source + ": malformed JSON: " + describe(e));
        } catch (IOException e) {
            throw new FsException(source + ": cannot parse JSON: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            String found = root == null || root.isMissingNode() ? "nothing" : root.getNodeType().toString().toLowerCase();
            throw new FsException(source + ": expected a JSON object, found " + found);
        }
        return root;
    }

    /** What is wrong, in plain words (not Jackson's token or class names), plus where it happened. */
    private static String describe(JacksonException e) {
        String message = e instanceof StreamConstraintsException
                ? tooLarge(e.getOriginalMessage())
                : plainWords(e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage());
        if (message.length() > 200) message = message.substring(0, 200) + "…";
        var location = e.getLocation();
        return location == null || location.getByteOffset() < 0
                ? message
                : message + " (at byte " + location.getByteOffset() + ")";
    }

    /** Jackson's limits guard the parser against hostile input; its message names the Java method of the limit. */
    private static String tooLarge(String message) {
        StreamReadConstraints limits = MAPPER.getFactory().streamReadConstraints();
        if (message.startsWith("Document nesting depth")) {
            return "nested more than " + limits.getMaxNestingDepth() + " levels deep";
        }
        if (message.startsWith("Number value length")) {
            return "a number longer than " + limits.getMaxNumberLength() + " digits";
        }
        if (message.startsWith("String value length")) {
            return "a string longer than " + limits.getMaxStringLength() + " characters";
        }
        if (message.startsWith("Name length")) {
            return "a field name longer than " + limits.getMaxNameLength() + " characters";
        }
        return "too large to parse";
    }

    private static String plainWords(String jacksonMessage) {
        String message = String.valueOf(jacksonMessage).replaceAll("\\s+", " ").strip();
        // Nested locations name a redacted source: keep only their line and column.
        message = message.replaceAll("\\[Source: [^;\\]]*; ", "[");
        Matcher unclosed = UNCLOSED.matcher(message);
        if (unclosed.matches()) {
            boolean object = unclosed.group(1).equals("Object");
            return "the JSON ends before the " + (object ? "'}' that closes the object" : "']' that closes the array")
                    + " opened at line " + unclosed.group(2) + ", column " + unclosed.group(3);
        }
        Matcher misclosed = MISCLOSED.matcher(message);
        if (misclosed.matches()) {
            return "'" + misclosed.group(1) + "' where '" + misclosed.group(2) + "' should close the "
                    + misclosed.group(3).toLowerCase() + " opened at line " + misclosed.group(4) + ", column "
                    + misclosed.group(5);
        }
        if (message.startsWith("Trailing token")) return "more JSON follows the object";
        if (message.startsWith("Unexpected end-of-input in VALUE_STRING")) return "the JSON ends inside a string";
        if (message.startsWith("Unexpected end-of-input")) return "the JSON ends early";
        Matcher nonStandard = NON_STANDARD.matcher(message);
        if (nonStandard.matches()) return "'" + nonStandard.group(1) + "' is not a JSON value";
        return message;
    }
}
