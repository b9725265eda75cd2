package fs.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The Qwen3 tokenizer files and goldens in the test resources, and the tokenizer loaded once for all tests: read back
 * from a {@link TokenizerCache}, so that every golden checks the cached tables as well as the parser that made them.
 */
public final class Qwen3Files {
    private static Tokenizer tokenizer;

    private Qwen3Files() {}

    /**
     * The folder of the Qwen3 tokenizer files, as a directory on disk (found through fs.repo, not the classpath: the
     * other modules' tests get these resources in fs-core's test-jar, where they are no files).
     */
    public static Path dir() {
        return Path.of(System.getProperty("fs.repo"), "core", "src", "test", "resources", "qwen3");
    }

    public static synchronized Tokenizer tokenizer() {
        if (tokenizer == null) {
            TokenizerCache cache = new TokenizerCache(Path.of(System.getProperty("fs.repo"), "core", "target", "test-tokenizer-cache"));
            Path json = dir().resolve("tokenizer.json");
            cache.read(json); // parses, and writes the cache file unless it is already there
            TokenizerData cached = cache.cached(json);
            if (cached == null) throw new IllegalStateException("the tokenizer cache did not keep " + json);
            tokenizer = new Tokenizer(cached);
        }
        return tokenizer;
    }

    public static String text(String name) {
        try {
            return Files.readString(dir().resolve(name), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static List<JsonNode> jsonLines(String name) {
        ObjectMapper json = new ObjectMapper();
        return text(name).lines().filter(line -> !line.isBlank()).map(line -> {
            try {
                return json.readTree(line);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).toList();
    }

    public static int[] ints(JsonNode array) {
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) ids[i] = array.get(i).asInt();
        return ids;
    }
}
