package fs.safetensors;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import fs.FsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Parses the JSON of checkpoints (safetensors headers, index and config files) strictly: a duplicate key or trailing
 * garbage is an error rather than a silent "last one wins", and every failure becomes one line naming the file.
 */
public final class StrictJson {
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

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

    /** Jackson's own message without its multi-line source excerpt, plus where it happened. */
    private static String describe(JacksonException e) {
        String message = e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage();
        // Nested locations name a redacted source: keep only their line and column.
        message = String.valueOf(message).replaceAll("\\[Source: [^;\\]]*; ", "[").replaceAll("\\s+", " ").strip();
        if (message.length() > 200) message = message.substring(0, 200) + "…";
        var location = e.getLocation();
        return location == null || location.getByteOffset() < 0
                ? message
                : message + " (at byte " + location.getByteOffset() + ")";
    }
}
