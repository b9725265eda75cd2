package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.model.GenerationConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SamplingParamsTest {
    @TempDir
    Path dir;

    private static final int VOCAB = 151936;

    private GenerationConfig readConfig(String json) throws IOException {
        Files.writeString(dir.resolve("generation_config.json"), json);
        return GenerationConfig.read(dir, VOCAB);
    }

    private void readFails(String json, String... parts) throws IOException {
        FsException e = assertThrows(FsException.class, () -> readConfig(json));
        String message = e.getMessage();
        assertTrue(message.startsWith(dir.resolve("generation_config.json") + ": "), "names the file: " + message);
        assertFalse(message.contains("\n"), "one line: " + message);
        for (String part : parts) assertTrue(message.contains(part), "'" + part + "' in: " + message);
        for (String internal : List.of("`", "Constraints", "START_OBJECT", "java.")) {
            assertFalse(message.contains(internal), "no '" + internal + "' in: " + message);
        }
    }

    @Test
    void rejectsTokenIdsOutsideTheVocabulary() throws IOException {
        readFails("{\"eos_token_id\": [151645, 151936]}", "eos_token_id 151936", "outside the vocabulary (0..151935");
        readFails("{\"eos_token_id\": -1}", "eos_token_id -1", "outside the vocabulary");
        readFails("{\"eos_token_id\": 4294967296}", "eos_token_id", "4294967296");
        readFails("{\"bos_token_id\": 200000}", "bos_token_id 200000", "outside the vocabulary");
        readFails("{\"eos_token_id\": [\"end\"]}", "eos_token_id", "'end'");
    }

    @Test
    void rejectsAGarbledFileInPlainWords() throws IOException {
        readFails("null", "expected a JSON object, found null");
        readFails("[]", "expected a JSON object, found array");
        readFails("{\"top_k\": 20, \"top_k\": 50}", "Duplicate", "top_k");
        readFails("{\"top_p\": " + "[".repeat(2000) + "]".repeat(2000) + "}", "nested more than");
        readFails("{\"temperature\": 0.6} {}", "malformed JSON");
        readFails("{\"top_k\": 2.5}", "top_k must be a whole number", "2.5");
        readFails("{\"do_sample\": \"yes\"}", "do_sample must be true or false");
    }

    @Test
    void qwen3GenerationConfigGivesItsSamplingDefaultsAndEosIds() throws IOException {
        GenerationConfig config = readConfig("""
                {"bos_token_id": 151643, "do_sample": true, "eos_token_id": [151645, 151643], "pad_token_id": 151643,
                 "temperature": 0.6, "top_k": 20, "top_p": 0.95, "transformers_version": "4.51.0"}""");
        assertEquals(List.of(151645, 151643), config.eosTokenIds());
        SamplingParams params = SamplingParams.of(config);
        assertEquals(0.6f, params.temperature());
        assertEquals(20, params.topK());
        assertEquals(0.95f, params.topP());
        assertEquals(0f, params.minP());
        assertEquals(1f, params.repeatPenalty());
    }

    @Test
    void withoutTheFileSamplingIsOnWithHuggingFaceDefaults() {
        GenerationConfig config = GenerationConfig.read(dir, VOCAB);
        assertEquals(List.of(), config.eosTokenIds());
        SamplingParams params = SamplingParams.of(config);
        assertEquals(1f, params.temperature());
        assertEquals(50, params.topK());
        assertEquals(1f, params.topP());
    }

    @Test
    void doSampleFalseMeansGreedyButKeepsThePenalty() throws IOException {
        SamplingParams params = SamplingParams.of(readConfig("""
                {"do_sample": false, "temperature": 0.7, "repetition_penalty": 1.3, "eos_token_id": 2}"""));
        assertTrue(params.isGreedy());
        assertEquals(1.3f, params.repeatPenalty());
        assertEquals(List.of(2), GenerationConfig.read(dir, VOCAB).eosTokenIds());
    }

    @Test
    void missingFieldsTakeHuggingFaceDefaultsAndNullDisables() throws IOException {
        SamplingParams params = SamplingParams.of(readConfig("""
                {"temperature": 0.8, "top_k": null, "min_p": 0.05}"""));
        assertEquals(0.8f, params.temperature());
        assertEquals(0, params.topK(), "top_k null disables top-k");
        assertEquals(1f, params.topP());
        assertEquals(0.05f, params.minP());
    }

    @Test
    void flagsOverrideOnlyWhatWasGiven() {
        SamplingParams base = new SamplingParams(0.6f, 20, 0.95f, 0f, 1f, 7L);
        SamplingParams changed = base.withOverrides(0f, null, 0.5f, null, 1.1f, null, null, 99L);
        assertEquals(new SamplingParams(0f, 20, 0.5f, 0f, 1.1f, 99L), changed);
        assertEquals(base, base.withOverrides(null, null, null, null, null, null, null, null));
    }

    @Test
    void eachUnseededRunGetsItsOwnSeed() {
        GenerationConfig config = GenerationConfig.defaults();
        assertTrue(SamplingParams.of(config).seed() != SamplingParams.of(config).seed());
    }

    @Test
    void outOfRangeValuesAreUserErrorsNamingTheParameter() {
        assertTrue(assertThrows(FsException.class, () -> new SamplingParams(-1f, 0, 1f, 0f, 1f, 0))
                .getMessage().startsWith("temperature"));
        assertTrue(assertThrows(FsException.class, () -> new SamplingParams(1f, -3, 1f, 0f, 1f, 0))
                .getMessage().startsWith("top-k"));
        assertTrue(assertThrows(FsException.class, () -> new SamplingParams(1f, 0, 0f, 0f, 1f, 0))
                .getMessage().startsWith("top-p"));
        assertTrue(assertThrows(FsException.class, () -> new SamplingParams(1f, 0, 1f, 1.5f, 1f, 0))
                .getMessage().startsWith("min-p"));
        assertTrue(assertThrows(FsException.class, () -> new SamplingParams(1f, 0, 1f, 0f, 0f, 0))
                .getMessage().startsWith("repeat penalty"));
        assertTrue(assertThrows(FsException.class, () -> new SamplingParams(Float.NaN, 0, 1f, 0f, 1f, 0))
                .getMessage().startsWith("temperature"));
        for (float bad : new float[] {2.01f, -3f, Float.NaN, Float.POSITIVE_INFINITY}) {
            assertTrue(assertThrows(FsException.class, () -> new SamplingParams(1f, 0, 1f, 0f, 1f, bad, 0f, 0))
                    .getMessage().startsWith("presence penalty"));
            assertTrue(assertThrows(FsException.class, () -> new SamplingParams(1f, 0, 1f, 0f, 1f, 0f, bad, 0))
                    .getMessage().startsWith("frequency penalty"));
        }
    }

    @Test
    void theAdditivePenaltiesTakeOpenAisRangeAndDefaultToOff() {
        SamplingParams edges = new SamplingParams(1f, 0, 1f, 0f, 1f, -2f, 2f, 0);
        assertEquals(-2f, edges.presencePenalty());
        assertEquals(2f, edges.frequencyPenalty());
        SamplingParams old = new SamplingParams(1f, 0, 1f, 0f, 1.1f, 5L);
        assertEquals(0f, old.presencePenalty());
        assertEquals(0f, old.frequencyPenalty());
        assertFalse(SamplingParams.greedy().hasPenalty());
        assertTrue(SamplingParams.greedy().withOverrides(null, null, null, null, null, 0.5f, null, null).hasPenalty());
        assertEquals(new SamplingParams(1f, 0, 1f, 0f, 1.1f, 0.3f, -0.2f, 5L),
                old.withOverrides(null, null, null, null, null, 0.3f, -0.2f, null));
    }

    @Test
    void aBrokenFileIsOneErrorNamingIt() throws IOException {
        FsException e = assertThrows(FsException.class, () -> readConfig("{\"top_k\": "));
        assertTrue(e.getMessage().contains("generation_config.json"), e.getMessage());
        FsException range = assertThrows(FsException.class, () -> SamplingParams.of(readConfig("{\"top_p\": 2}")));
        assertTrue(range.getMessage().startsWith("generation_config.json: top-p"), range.getMessage());
    }

    /** A value from the file holding a line break, or 2,000 characters, is shown quoted and cut: one short line. */
    @Test
    void quotesValuesFromTheFileOnOneShortLine() throws IOException {
        readFails("{\"do_sample\": \"y\\nes" + "x".repeat(2000) + "\"}", "do_sample must be true or false, found string 'y\\u000aes");
        readFails("{\"eos_token_id\": " + "9".repeat(900) + "}", "eos_token_id 9999", "…");
        readFails("{\"top_k\": [" + "1,".repeat(2000) + "1]}", "top_k must be a whole number");
        for (String json : List.of("{\"do_sample\": \"" + "x".repeat(2000) + "\"}", "{\"eos_token_id\": " + "9".repeat(900) + "}",
                "{\"temperature\": [\"" + "x".repeat(2000) + "\"]}")) {
            FsException e = assertThrows(FsException.class, () -> readConfig(json));
            assertTrue(e.getMessage().length() < dir.toString().length() + 150, "short: " + e.getMessage());
        }
    }
}
