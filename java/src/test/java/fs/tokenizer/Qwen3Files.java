package fs.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The Qwen3 tokenizer files and goldens in the test resources, and the tokenizer loaded once for all tests. */
public final class Qwen3Files {
    private static Tokenizer tokenizer;

    private Qwen3Files() {}

    public static Path dir() {
        try {
            return Path.of(Qwen3Files.class.getResource("/qwen3/tokenizer.json").toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    public static synchronized Tokenizer tokenizer() {
        if (tokenizer == null) tokenizer = Tokenizer.load(dir());
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
