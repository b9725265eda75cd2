package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.fuzz.LoaderContract;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tokenizer's API on Qwen3, streaming decode, and tokenizer.json variants and errors on small made-up files. */
class TokenizerTest {
    private final Tokenizer qwen = Qwen3Files.tokenizer();

    @Test
    void knowsQwen3sVocabularyAndSpecialTokens() {
        assertEquals(151_669, qwen.vocabSize());
        assertEquals(OptionalInt.of(151_645), qwen.tokenId("<|im_end|>"));
        assertEquals(OptionalInt.of(151_643), qwen.tokenId("<|endoftext|>"));
        assertEquals(OptionalInt.of(151_667), qwen.tokenId("<think>"));
        assertEquals(OptionalInt.of(1879), qwen.tokenId("\u0120world"));
        assertEquals(OptionalInt.empty(), qwen.tokenId("<|no_such_token|>"));
        assertTrue(qwen.isSpecial(151_645));
        assertFalse(qwen.isSpecial(151_667)); // <think> is added but not special
        assertFalse(qwen.isSpecial(1879));
        assertFalse(qwen.isSpecial(-1));
    }

    @Test
    void tokenBytesAreEachTokensOwnRawUtf8() {
        String text = "Hé 世界 <|im_end|>";
        int[] ids = qwen.encode(text);
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        for (int id : ids) joined.writeBytes(qwen.tokenBytes(id));
        assertArrayEquals(text.getBytes(StandardCharsets.UTF_8), joined.toByteArray());
        assertArrayEquals("<|im_end|>".getBytes(StandardCharsets.US_ASCII), qwen.tokenBytes(151_645));
        assertArrayEquals(" world".getBytes(StandardCharsets.US_ASCII), qwen.tokenBytes(1879));
        assertThrows(FsException.class, () -> qwen.tokenBytes(151_669));
    }

    @Test
    void refusesUnknownIds() {
        FsException e = assertThrows(FsException.class, () -> qwen.decode(new int[] {9707, 151_669}, false));
        assertEquals("unknown token id 151669 (the vocabulary has ids 0..151668)", e.getMessage());
        assertThrows(FsException.class, () -> qwen.decode(new int[] {-3}, true));
        assertThrows(FsException.class, () -> qwen.streamingDecoder().push(200_000));
    }

    @Test
    void streamsWholeCharactersOnly() {
        for (JsonNode c : Qwen3Files.jsonLines("qwen3_decode_golden.jsonl")) {
            int[] ids = Qwen3Files.ints(c.get("ids"));
            StreamingDecoder stream = qwen.streamingDecoder();
            StringBuilder text = new StringBuilder();
            for (int id : ids) {
                String piece = stream.push(id);
                // A piece never ends inside a surrogate pair, nor with U+FFFD for bytes a later id could complete.
                assertFalse(!piece.isEmpty() && Character.isHighSurrogate(piece.charAt(piece.length() - 1)));
                text.append(piece);
            }
            text.append(stream.flush());
            assertEquals(c.get("decoded").asText(), text.toString());
        }
        // 🦙 is F0 9F A6 99 over three ids: nothing comes out until its last byte.
        StreamingDecoder stream = qwen.streamingDecoder();
        assertEquals(" ", stream.push(11162));
        assertEquals("", stream.push(99));
        assertEquals("\uD83E\uDD99", stream.push(247));
        assertEquals("", stream.flush());
        // Cut short, the pending bytes become one U+FFFD at the end, as in a whole decode.
        assertEquals(" ", stream.push(11162));
        assertEquals("\uFFFD", stream.flush());
        StreamingDecoder skipping = qwen.streamingDecoder(true);
        assertEquals("", skipping.push(151_644));
        assertEquals("user", skipping.push(872));
    }

    @Test
    void encodesLongWordsAndRepeatedText() {
        String word = "ab".repeat(20_000);
        int[] ids = qwen.encode(word);
        assertEquals(word, qwen.decode(ids, false));
        assertArrayEquals(ids, qwen.encode(word), "a second encode, through the piece cache");
        assertArrayEquals(new int[0], qwen.encode(""));
    }

    /** A byte-level BPE file small enough to work out by hand: bytes a, b, c, space, merges a+b, ab+c, space+ab. */
    private static String tinyTokenizer(String merges, String extra) {
        return """
                {"version": "1.0", "added_tokens": [
                   {"id": 9, "content": "<x>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
                 "normalizer": null,
                 "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
                 "post_processor": null,
                 "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
                 "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                   "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false%s,
                   "vocab": {"a": 0, "b": 1, "c": 2, "\\u0120": 3, "ab": 4, "abc": 5, "\\u0120ab": 6},
                   "merges": %s}}
                """.formatted(extra, merges);
    }

    private static Tokenizer load(Path dir, String json) throws IOException {
        Files.writeString(dir.resolve("tokenizer.json"), json);
        return Tokenizer.load(dir);
    }

    @Test
    void readsMergesAsStringsOrArrays(@TempDir Path dir) throws IOException {
        Tokenizer strings = load(dir, tinyTokenizer("[\"a b\", \"ab c\", \"\\u0120 ab\"]", ""));
        Tokenizer arrays = load(dir, tinyTokenizer("[[\"a\", \"b\"], [\"ab\", \"c\"], [\"\\u0120\", \"ab\"]]", ""));
        // GPT-2 split: "abc", " ab", "<x>" (added), "c", "a"; then BPE: abc | Ġab | <x> | c | a
        int[] expected = {5, 6, 9, 2, 0};
        assertArrayEquals(expected, strings.encode("abc ab<x>ca"));
        assertArrayEquals(expected, arrays.encode("abc ab<x>ca"));
        assertEquals("abc ab<x>ca", strings.decode(expected, false));
        assertEquals("abc abca", strings.decode(expected, true));
        assertEquals(10, strings.vocabSize());
        // Hugging Face writes the vocabulary first, but JSON does not require it.
        String mergesFirst = tinyTokenizer("[\"a b\", \"ab c\", \"\\u0120 ab\"]", "")
                .replaceFirst("(\"vocab\": \\{[^}]*\\}),\\s*(\"merges\": \\[[^\\]]*\\])", "$2, $1");
        assertTrue(mergesFirst.indexOf("\"merges\"") < mergesFirst.indexOf("\"vocab\""), mergesFirst);
        assertArrayEquals(expected, load(dir, mergesFirst).encode("abc ab<x>ca"));
    }

    @Test
    void appliesMergesByRankNotByPosition(@TempDir Path dir) throws IOException {
        // With "b c" ranked first, "abc" becomes a + bc, not ab + c.
        String json = tinyTokenizer("[\"b c\", \"a b\"]", "").replace("\"abc\": 5", "\"bc\": 5");
        assertArrayEquals(new int[] {0, 5}, load(dir, json).encode("abc"));
    }

    @Test
    void takesWholeWordsWithIgnoreMerges(@TempDir Path dir) throws IOException {
        // "abc" is in the vocabulary, so ignore_merges takes it whole although no merge leads there.
        assertArrayEquals(new int[] {5}, load(dir, tinyTokenizer("[]", ", \"ignore_merges\": true")).encode("abc"));
        assertArrayEquals(new int[] {0, 1, 2}, load(dir, tinyTokenizer("[]", "")).encode("abc"));
    }

    @Test
    void refusesWhatItCannotDoExactly(@TempDir Path dir) throws IOException {
        assertError(dir, tinyTokenizer("[\"a z\"]", ""), "merge 0 ('a', 'z') uses a token missing from model.vocab");
        assertError(dir, tinyTokenizer("[\"a b c\"]", ""), "is not two tokens separated by a space");
        assertError(dir, tinyTokenizer("[]", "").replace("\"BPE\"", "\"WordPiece\""), "model type 'WordPiece' is not supported");
        assertError(dir, tinyTokenizer("[]", "").replace("\"normalizer\": null", "\"normalizer\": {\"type\": \"Lowercase\"}"),
                "normalizer 'Lowercase' is not supported");
        assertError(dir, tinyTokenizer("[]", "").replace("\"lstrip\": false", "\"lstrip\": true"), "sets lstrip");
        assertError(dir, tinyTokenizer("[]", "").replace("\"add_prefix_space\": false", "\"add_prefix_space\": true"),
                "add_prefix_space is not supported");
        assertError(dir, "{\"model\": ", "the file ends too early");
        assertError(dir, "[1, 2]", "the file should be an object, not an array");
        assertError(dir, tinyTokenizer("[]", "").replace("\"added_tokens\": [", "\"added_tokens\": [7, "),
                "added_tokens[0] must be an object, found number 7");
        FsException missing = assertThrows(FsException.class, () -> Tokenizer.load(dir.resolve("absent")));
        assertTrue(missing.getMessage().startsWith("model directory not found"), missing.getMessage());
    }

    @Test
    void refusesIdsFarBeyondTheVocabularyBeforeAllocatingForThem(@TempDir Path dir) throws IOException {
        // Tables are sized by the highest id: these used to ask for gigabytes (an OutOfMemoryError after seconds).
        assertError(dir, tinyTokenizer("[]", "").replace("\"id\": 9,", "\"id\": 1000000000,"),
                "added token '<x>' has id 1000000000, beyond the vocabulary (the file defines 8 tokens; ids up to 65543 are accepted)");
        assertError(dir, tinyTokenizer("[]", "").replace("\"ab\": 4", "\"ab\": 1000000000"),
                "model.vocab['ab'] has id 1000000000, beyond the vocabulary");
        assertError(dir, tinyTokenizer("[]", "").replace("\"ab\": 4", "\"ab\": 99999999999999999999"),
                "model.vocab['ab'] has id 99999999999999999999, beyond the vocabulary");
        assertError(dir, tinyTokenizer("[]", "").replace("\"ab\": 4", "\"ab\": 1" + "0".repeat(999)),
                "model.vocab['ab'] has id 100000000000000000000000…, beyond the vocabulary");
        // A few unused ids below the highest are a tokenizer's own business (this one leaves 7 and 8 unused).
        assertEquals(10, load(dir, tinyTokenizer("[]", "")).vocabSize());
    }

    @Test
    void refusesAFileTooLargeToBeATokenizerBeforeReadingIt(@TempDir Path dir) throws IOException {
        // Sparse: 300 MB that take no disk, and would take 300 MB of heap (and tables several times that) if read.
        try (RandomAccessFile file = new RandomAccessFile(dir.resolve("tokenizer.json").toFile(), "rw")) {
            file.setLength(300_000_000L);
        }
        FsException e = assertThrows(FsException.class, () -> Tokenizer.load(dir, new TokenizerCache(null)));
        assertEquals("tokenizer " + dir.resolve("tokenizer.json") + ": 286 MiB, more than any tokenizer.json needs"
                + " (the limit is 256 MiB; Qwen3's is 10.9 MiB)", e.getMessage());
    }

    @Test
    void refusesASplitPatternTooLongToCompileQuickly(@TempDir Path dir) throws IOException {
        // A long literal's compile time is quadratic in the JDK: 47,000 characters took 8 s before this limit.
        String split = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"" + "x".repeat(4097)
                + "\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false}]}";
        assertError(dir, tinyTokenizer("[]", "").replaceFirst("\"pre_tokenizer\": \\{[^}]*\\}", java.util.regex.Matcher.quoteReplacement("\"pre_tokenizer\": " + split)),
                "Split pre-tokenizer pattern is 4097 characters long, more than any pre-tokenizer needs (the limit is 4096)");
    }

    @Test
    void quotesARegexErrorThatHoldsALineBreak(@TempDir Path dir) throws IOException {
        String split = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\p{\\r}\"},"
                + " \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false}]}";
        assertError(dir, tinyTokenizer("[]", "").replaceFirst("\"pre_tokenizer\": \\{[^}]*\\}", java.util.regex.Matcher.quoteReplacement("\"pre_tokenizer\": " + split)),
                "Split pre-tokenizer regex does not compile: 'Unknown character property name {\\u000d}' at index 4");
    }

    @Test
    void refusesIdsTheModelHasNoEmbeddingRowFor(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("tokenizer.json"), tinyTokenizer("[]", ""));
        FsException e = assertThrows(FsException.class, () -> Tokenizer.load(dir, new TokenizerCache(null), 9));
        assertEquals(dir.resolve("tokenizer.json") + ": token id 9 is beyond config.json's vocab_size 9"
                + " (the model has no embedding row for it)", e.getMessage());
        assertEquals(10, Tokenizer.load(dir, new TokenizerCache(null), 10).vocabSize());
    }

    @Test
    void describesSectionsOfTheWrongShapeInPlainWords(@TempDir Path dir) throws IOException {
        String tiny = tinyTokenizer("[]", "");
        assertError(dir, tiny.replace("\"normalizer\": null", "\"normalizer\": [1]"), "normalizer must be an object, found array [1]");
        assertError(dir, tiny.replaceFirst("\"pre_tokenizer\": \\{[^}]*\\}", "\"pre_tokenizer\": {\"type\": \"Split\", \"behavior\": \"Isolated\"}"),
                "pre_tokenizer.pattern is missing");
        assertError(dir, tiny.replace("\"vocab\": {", "\"vocab\": 3, \"x\": {"), "model.vocab should be an object, not an integer");
        assertError(dir, tiny.replace("\"content\": \"<x>\"", "\"content\": \"<\\n>\", \"id\": \"9\""),
                "added token '<\\u000a>' has no integer \"id\"");
        assertError(dir, "{\"a\": " + "[".repeat(1500) + "]".repeat(1500) + "}", "nested more than 1000 levels deep");
        assertError(dir, "{\"a\": \"abc", "the file ends in the middle of a string");
        assertError(dir, tiny.replace("\"model\": {\"type\": \"BPE\"", "\"model\": {\"type\": {\"a\": " + "[1,".repeat(300) + "1" + "]".repeat(300) + "}"),
                "model type object {\"a\":[1,[1,");
        assertError(dir, "{\"a\": [1}", "not valid JSON: Unexpected close marker '}': expected ']' at line 1");
    }

    private static void assertError(Path dir, String json, String expected) throws IOException {
        Files.writeString(dir.resolve("tokenizer.json"), json);
        FsException e = assertThrows(FsException.class, () -> Tokenizer.load(dir));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(e.getMessage().startsWith("tokenizer " + dir.resolve("tokenizer.json")), e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
        assertNull(LoaderContract.violation(e, "tokenizer.json"));
    }
}
