package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The binary tokenizer cache: what it reads back, and what it does with stale, corrupt and unwritable files. */
class TokenizerCacheTest {
    @TempDir
    Path temp;

    /** A model directory with a small tokenizer.json of its own (Qwen3's split, a few merges, added tokens). */
    private Path smallModel() throws IOException {
        Path dir = Files.createDirectories(temp.resolve("model"));
        Files.writeString(dir.resolve("tokenizer.json"), """
                {"added_tokens": [{"id": 9, "content": "<|end|>", "special": true, "normalized": false}],
                 "normalizer": {"type": "NFC"},
                 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                   {"type": "Split", "pattern": {"Regex": "\\\\s+|\\\\p{L}+|[0-9]"}, "behavior": "Isolated", "invert": false},
                   {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
                 "decoder": {"type": "ByteLevel"},
                 "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4, "Ġ": 5, "1": 6},
                           "merges": ["a b", ["ab", "c"]]}}
                """);
        return dir;
    }

    @Test
    void readsBackTheTokenizerItWrote() throws IOException {
        Path model = smallModel();
        TokenizerCache cache = new TokenizerCache(temp.resolve("cache"));
        Path json = model.resolve("tokenizer.json");
        assertNull(cache.cached(json));
        Tokenizer parsed = Tokenizer.load(model, cache);
        assertTrue(Files.isRegularFile(cache.cacheFile(json)));
        TokenizerData cached = cache.cached(json);
        assertNotNull(cached);
        Tokenizer fromCache = new Tokenizer(cached);
        for (String text : new String[] {"abc ab a1c<|end|>b", "cab  abcabc\n", "é<|end|>"}) {
            assertArrayEquals(parsed.encode(text), fromCache.encode(text), text);
            assertEquals(parsed.preTokens(text), fromCache.preTokens(text), text);
        }
        assertArrayEquals(new int[] {4, 5, 2, 5, 0, 6, 3, 9, 1}, fromCache.encode("abc ab a1c<|end|>b"));
        assertEquals(parsed.vocabSize(), fromCache.vocabSize());
        assertEquals(10, fromCache.vocabSize());
        assertEquals("abc", fromCache.token(4));
        assertEquals("<|end|>", fromCache.token(9));
        assertThrows(FsException.class, () -> fromCache.token(7));
        assertTrue(fromCache.isSpecial(9));
        assertEquals("abc ab", fromCache.decode(new int[] {4, 5, 2, 9}, true));
    }

    @Test
    void qwen3ThroughTheCacheMatchesTheParsedFile() {
        // Qwen3Files' tokenizer, which all the goldens use, is the one read back from a cache.
        Tokenizer parsed = new Tokenizer(TokenizerFile.read(Qwen3Files.dir().resolve("tokenizer.json")));
        Tokenizer cached = Qwen3Files.tokenizer();
        assertEquals(parsed.vocabSize(), cached.vocabSize());
        for (JsonNode c : Qwen3Files.jsonLines("qwen3_tokenizer_golden.jsonl")) {
            String text = c.get("text").asText();
            assertArrayEquals(parsed.encode(text), cached.encode(text), text);
        }
        for (int id = 0; id < parsed.vocabSize(); id += 97) assertEquals(parsed.token(id), cached.token(id));
    }

    @Test
    void rebuildsACorruptOrTruncatedFile() throws IOException {
        Path model = smallModel();
        Path json = model.resolve("tokenizer.json");
        TokenizerCache cache = new TokenizerCache(temp.resolve("cache"));
        int[] expected = Tokenizer.load(model, cache).encode("abc ab");
        Path file = cache.cacheFile(json);
        byte[] good = Files.readAllBytes(file);

        byte[] flipped = good.clone();
        flipped[flipped.length - 40] ^= 0x10; // inside the tables: only the checksum notices
        for (byte[] bad : new byte[][] {flipped, Arrays.copyOf(good, good.length / 2), new byte[0], "not a cache".getBytes()}) {
            Files.write(file, bad);
            assertNull(cache.cached(json));
            assertArrayEquals(expected, Tokenizer.load(model, cache).encode("abc ab"));
            assertArrayEquals(good, Files.readAllBytes(file), "the cache file is rewritten");
            assertNotNull(cache.cached(json));
        }
    }

    /**
     * Tables that pass the checksum (written by another build, or by hand) are still checked before use: an added
     * token id near 2^31 would size the tokenizer's tables by itself and crash it with an OutOfMemoryError.
     */
    @Test
    void rebuildsTablesThatPassTheChecksumButCannotBeUsed() throws IOException {
        Path model = smallModel();
        Path json = model.resolve("tokenizer.json");
        TokenizerCache cache = new TokenizerCache(temp.resolve("cache"));
        int[] expected = Tokenizer.load(model, cache).encode("abc<|end|>");
        Path file = cache.cacheFile(json);
        byte[] good = Files.readAllBytes(file);
        int bodyStart = CacheFileBytes.bodyStart(good);
        byte[] tables = Arrays.copyOfRange(good, bodyStart, good.length);
        int content = indexOf(tables, "<|end|>".getBytes(StandardCharsets.UTF_16BE));
        ByteBuffer.wrap(tables).putInt(content - 8, Integer.MAX_VALUE - 1); // the added token's id, before its length
        Files.write(file, CacheFileBytes.withTables(good, tables));

        assertNull(cache.cached(json));
        assertArrayEquals(expected, Tokenizer.load(model, cache).encode("abc<|end|>"));
        assertArrayEquals(good, Files.readAllBytes(file), "the cache file is rewritten");
    }

    private static int indexOf(byte[] bytes, byte[] part) {
        for (int i = 0; i + part.length <= bytes.length; i++) {
            if (Arrays.equals(bytes, i, i + part.length, part, 0, part.length)) return i;
        }
        throw new AssertionError("not found");
    }

    @Test
    void ignoresAFileMadeFromAnEarlierTokenizerJson() throws IOException {
        Path model = smallModel();
        Path json = model.resolve("tokenizer.json");
        TokenizerCache cache = new TokenizerCache(temp.resolve("cache"));
        assertArrayEquals(new int[] {4}, Tokenizer.load(model, cache).encode("abc"));
        // The same size, another vocabulary: "abc" now has id 8.
        Files.writeString(json, Files.readString(json).replace("\"abc\": 4", "\"abc\": 8"));
        Files.setLastModifiedTime(json, FileTime.fromMillis(Files.getLastModifiedTime(json).toMillis() + 5_000));
        assertNull(cache.cached(json));
        assertArrayEquals(new int[] {8}, Tokenizer.load(model, cache).encode("abc"));
        assertNotNull(cache.cached(json));
    }

    @Test
    void worksWithoutAWritableCacheDirectory() throws IOException {
        Path model = smallModel();
        Path file = Files.writeString(temp.resolve("a-file"), "not a directory");
        // A directory that cannot be made (its parent is a file), and a file where the directory should be. (Permission
        // bits would not do: the tests may run as root.)
        for (Path dir : new Path[] {file.resolve("cache"), file}) {
            TokenizerCache cache = new TokenizerCache(dir);
            assertArrayEquals(new int[] {4, 5, 2}, Tokenizer.load(model, cache).encode("abc ab"), dir.toString());
            assertNull(cache.cached(model.resolve("tokenizer.json")));
        }
        assertEquals("not a directory", Files.readString(file));
        try (var entries = Files.list(temp)) {
            assertEquals(2, entries.count(), "no temporary file left behind");
        }
    }

    @Test
    void reportsAMissingTokenizerJsonAsBefore() throws IOException {
        Path empty = Files.createDirectories(temp.resolve("empty"));
        FsException e = assertThrows(FsException.class, () -> Tokenizer.load(empty, new TokenizerCache(temp.resolve("cache"))));
        assertEquals("no tokenizer.json at " + empty.resolve("tokenizer.json"), e.getMessage());
    }
}
