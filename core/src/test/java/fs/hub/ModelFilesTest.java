package fs.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading a downloaded model.safetensors.index.json for the shard files it names. */
class ModelFilesTest {
    @TempDir
    Path dir;

    private Path index(String json) throws IOException {
        return Files.writeString(dir.resolve(ModelFiles.WEIGHTS_INDEX), json);
    }

    private void shardsFail(String json, String... parts) throws IOException {
        Path index = index(json);
        FsException e = assertThrows(FsException.class, () -> ModelFiles.shards(index));
        String message = e.getMessage();
        assertTrue(message.startsWith(index + ": "), "names the file: " + message);
        assertFalse(message.contains("\n") || message.contains("\r"), "one line: " + message);
        assertTrue(message.length() < index.toString().length() + 150, "short: " + message);
        for (String part : parts) assertTrue(message.contains(part), "'" + part + "' in: " + message);
        for (String internal : List.of("`", "Source", "START_", "java.", "Jackson")) {
            assertFalse(message.contains(internal), "no '" + internal + "' in: " + message);
        }
    }

    @Test
    void listsEachShardOnceInOrderOfFirstMention() throws IOException {
        Path index = index("{\"weight_map\": {\"a\": \"model-00002-of-00002.safetensors\","
                + " \"b\": \"model-00001-of-00002.safetensors\", \"c\": \"model-00002-of-00002.safetensors\"}}");
        assertEquals(List.of("model-00002-of-00002.safetensors", "model-00001-of-00002.safetensors"),
                ModelFiles.shards(index));
    }

    @Test
    void describesABrokenIndexInPlainWordsAndRefusesDuplicates() throws IOException {
        shardsFail("{\"weight_map\": {\"a\": \"x.safetensors\"", "malformed JSON");
        shardsFail("{\"weight_map\": {\"a\": \"x.safetensors\", \"a\": \"y.safetensors\"}}", "Duplicate", "'a'");
        shardsFail("{\"weight_map\": {}}", "no weight_map");
        shardsFail("{\"weight_map\": {\"a\": 3}}", "weight_map entry 'a' must be a file name");
    }

    @Test
    void quotesAShardNameThatIsNoPlainFileNameOnOneShortLine() throws IOException {
        shardsFail("{\"weight_map\": {\"a\": \"../up\\n" + "x".repeat(2000) + "\"}}",
                "not a plain file name: '../up\\u000a" + "x".repeat(54) + "…'");
    }
}
