package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.gguf.GgufFile;
import fs.gguf.GgufValueType;
import fs.gguf.GgufWriter;
import fs.gguf.QTied;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tokenizer of a GGUF file against the tokenizer.json it was made from: the same ids for every test string, the
 * same text for every id. On llama.cpp's own file (q-tied, a cut vocabulary) and on a GGUF of Qwen3's full
 * vocabulary written here the way llama.cpp's converter writes one (too large to commit: 6 MB of metadata).
 */
class GgufTokenizerTest {
    /** Qwen3-0.6B's embedding rows: the token list is padded to them. */
    private static final int QWEN3_ROWS = 151_936;

    @TempDir
    static Path temp;

    private static Tokenizer fullFromGguf;

    @BeforeAll
    static void writeTheFullVocabularyGguf() {
        Path file = TokenizerGguf.write(temp.resolve("qwen3-tokenizer.gguf"),
                TokenizerGguf.keys(Qwen3Files.dir().resolve("tokenizer.json"), QWEN3_ROWS));
        fullFromGguf = read(file);
    }

    private static Tokenizer read(Path file) {
        try (GgufFile gguf = GgufFile.open(file)) {
            return GgufTokenizer.read(gguf.metadata());
        }
    }

    /** Every string the tokenizer tests use: both goldens, llama.cpp's vectors and the chat template's prompts. */
    private static List<String> testStrings() {
        List<String> texts = new ArrayList<>();
        Qwen3Files.jsonLines("qwen3_tokenizer_golden.jsonl").forEach(c -> texts.add(c.get("text").asText()));
        for (String name : List.of("qwen3_chat_template_golden.jsonl", "qwen3_chat_template_extra_golden.jsonl")) {
            Qwen3Files.jsonLines(name).forEach(c -> texts.add(c.get("rendered").asText()));
        }
        String[] llamaCpp = Qwen3Files.text("llamacpp-vocab-qwen2.inp").split("\n__ggml_vocab_test__\n", -1);
        texts.addAll(Arrays.asList(llamaCpp).subList(0, llamaCpp.length - 1));
        return texts;
    }

    /** The same ids for every text, and for every id the same token, text (both ways) and special flag. */
    private static void assertSameTokenizer(Tokenizer expected, Tokenizer actual) {
        assertEquals(expected.vocabSize(), actual.vocabSize());
        List<String> texts = testStrings();
        assertTrue(texts.size() > 200, "the test strings are all there: " + texts.size());
        for (String text : texts) assertArrayEquals(expected.encode(text), actual.encode(text), text);
        for (int id = 0; id < expected.vocabSize(); id++) {
            int[] one = {id};
            assertEquals(expected.token(id), actual.token(id), "token " + id);
            assertEquals(expected.isSpecial(id), actual.isSpecial(id), "special " + id);
            assertEquals(expected.decode(one, false), actual.decode(one, false), "decode " + id);
            assertEquals(expected.decode(one, true), actual.decode(one, true), "decode skipping specials " + id);
        }
        // Runs of neighbouring ids decoded and encoded again: every token's bytes go through the BPE merges.
        for (int first = 0; first < expected.vocabSize(); first += 16) {
            int[] ids = new int[Math.min(16, expected.vocabSize() - first)];
            for (int i = 0; i < ids.length; i++) ids[i] = first + i;
            String text = expected.decode(ids, false);
            assertArrayEquals(expected.encode(text), actual.encode(text), "ids from " + first);
        }
    }

    @Test
    void aGgufOfTheFullQwen3VocabularyIsTheTokenizerOfItsTokenizerJson() {
        assertEquals(151_669, fullFromGguf.vocabSize(), "the [PAD] placeholders are no tokens");
        assertSameTokenizer(Qwen3Files.tokenizer(), fullFromGguf);
        for (JsonNode c : Qwen3Files.jsonLines("qwen3_tokenizer_golden.jsonl")) {
            assertArrayEquals(Qwen3Files.ints(c.get("ids")), fullFromGguf.encode(c.get("text").asText()),
                    "golden case " + c.get("n"));
        }
        FsException padding = assertThrows(FsException.class, () -> fullFromGguf.decode(new int[] {151_700}, false));
        assertTrue(padding.getMessage().contains("unknown token id 151700"), padding.getMessage());
    }

    @Test
    void aGgufFilesTokenizerReadBackFromTheCacheIsTheOneItsMetadataBuilds() {
        Path file = TokenizerGguf.write(temp.resolve("cached.gguf"),
                TokenizerGguf.keys(Qwen3Files.dir().resolve("tokenizer.json"), QWEN3_ROWS));
        TokenizerCache cache = new TokenizerCache(temp.resolve("cache"));
        try (GgufFile gguf = GgufFile.open(file)) {
            assertNull(cache.cached(file));
            assertSameTokenizer(fullFromGguf, GgufTokenizer.read(gguf, cache)); // built, and written to the cache
            assertTrue(Files.isRegularFile(cache.cacheFile(file)));
            assertNotNull(cache.cached(file));
            assertSameTokenizer(fullFromGguf, GgufTokenizer.read(gguf, cache)); // read back
        }
    }

    @Test
    void llamaCppsGgufOfQTiedIsTheTokenizerOfItsTokenizerJson() {
        Tokenizer json = Tokenizer.load(QTied.dir(), new TokenizerCache(
                Path.of(System.getProperty("fs.repo"), "core", "target", "test-tokenizer-cache")));
        assertSameTokenizer(json, read(QTied.gguf("BF16")));
    }

    private static Map<String, Consumer<GgufWriter>> qTiedKeys() {
        return TokenizerGguf.keys(QTied.dir().resolve("tokenizer.json"), 8064);
    }

    private static void assertRefused(Map<String, Consumer<GgufWriter>> keys, String expected) {
        Path file = TokenizerGguf.write(temp.resolve("refused.gguf"), keys);
        FsException e = assertThrows(FsException.class, () -> read(file));
        assertEquals(file + ": " + expected, e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void refusesOtherTokenizerModelsAndPreTokenizersByName() {
        var keys = qTiedKeys();
        keys.put(GgufTokenizer.MODEL, w -> w.string(GgufTokenizer.MODEL, "llama"));
        assertRefused(keys, "key 'tokenizer.ggml.model' is 'llama': only 'gpt2' (byte-level BPE) is supported");

        keys = qTiedKeys();
        keys.put(GgufTokenizer.PRE, w -> w.string(GgufTokenizer.PRE, "llama-bpe"));
        assertRefused(keys, "key 'tokenizer.ggml.pre' is 'llama-bpe': only 'qwen2' (Qwen2 and Qwen3's pre-tokenizer)"
                + " is supported");

        keys = qTiedKeys();
        keys.remove(GgufTokenizer.PRE);
        assertRefused(keys, "key 'tokenizer.ggml.pre' is missing");
    }

    @Test
    void refusesTokenListsItWouldHaveToGuessAt() {
        var keys = qTiedKeys();
        keys.put(GgufTokenizer.TOKEN_TYPE, w -> w.array(GgufTokenizer.TOKEN_TYPE, GgufValueType.INT32, 1, 1, 1));
        assertRefused(keys, "key 'tokenizer.ggml.token_type' lists 3 types for 8064 tokens");

        keys = qTiedKeys();
        keys.put(GgufTokenizer.TOKEN_TYPE, w -> w.array(GgufTokenizer.TOKEN_TYPE, GgufValueType.UINT8, 1));
        assertRefused(keys, "key 'tokenizer.ggml.token_type' must be an array of signed 32-bit integer values, found"
                + " an array of unsigned 8-bit integer values");

        keys = qTiedKeys();
        Object[] types = new Object[8064];
        Arrays.fill(types, TokenizerGguf.NORMAL);
        types[5] = 6;
        keys.put(GgufTokenizer.TOKEN_TYPE, w -> w.array(GgufTokenizer.TOKEN_TYPE, GgufValueType.INT32, types));
        assertRefused(keys, "key 'tokenizer.ggml.token_type' gives token 5 '&' the type BYTE, which a gpt2 tokenizer"
                + " does not use");

        keys = qTiedKeys();
        Object[] tokens = new Object[8064];
        for (int i = 0; i < tokens.length; i++) tokens[i] = "[PAD" + i + "]";
        tokens[0] = "a";
        tokens[7] = "a";
        Object[] allNormal = new Object[8064];
        Arrays.fill(allNormal, TokenizerGguf.NORMAL);
        keys.put(GgufTokenizer.TOKENS, w -> w.array(GgufTokenizer.TOKENS, GgufValueType.STRING, tokens));
        keys.put(GgufTokenizer.TOKEN_TYPE, w -> w.array(GgufTokenizer.TOKEN_TYPE, GgufValueType.INT32, allNormal));
        assertRefused(keys, "key 'tokenizer.ggml.tokens' lists 'a' twice (again as token 7)");
    }

    @Test
    void refusesMergesOfUnknownTokensAndSpecialIdsOutsideTheTokens() {
        var keys = qTiedKeys();
        keys.put(GgufTokenizer.MERGES, w -> w.array(GgufTokenizer.MERGES, GgufValueType.STRING, "i n", "q zzz"));
        assertRefused(keys, "key 'tokenizer.ggml.merges' entry 1 'q zzz' uses a token that is not a normal token of"
                + " tokenizer.ggml.tokens");

        keys = qTiedKeys();
        keys.put(GgufTokenizer.MERGES, w -> w.array(GgufTokenizer.MERGES, GgufValueType.STRING, "in"));
        assertRefused(keys, "key 'tokenizer.ggml.merges' entry 0 'in' is not two tokens separated by a space");

        keys = qTiedKeys();
        keys.put("eos", w -> w.u32("tokenizer.ggml.eos_token_id", 8030)); // a [PAD] placeholder
        assertRefused(keys, "key 'tokenizer.ggml.eos_token_id' is 8030, which is not a token of tokenizer.ggml.tokens");
        keys.put("eos", w -> w.u32("tokenizer.ggml.eos_token_id", 9000));
        assertRefused(keys, "key 'tokenizer.ggml.eos_token_id' is 9000, which is not a token of tokenizer.ggml.tokens");
    }
}
