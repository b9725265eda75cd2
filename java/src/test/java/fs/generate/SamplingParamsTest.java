package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SamplingParamsTest {
    @TempDir
    Path dir;

    private GenerationConfig readConfig(String json) throws IOException {
        Files.writeString(dir.resolve("generation_config.json"), json);
        return GenerationConfig.read(dir);
    }

    @Test
    void qwen3GenerationConfigGivesItsSamplingDefaultsAndEosIds() throws IOException {
        GenerationConfig config = readConfig("""
                {"bos_token_id": 151643, "do_sample": true, "eos_token_id": [151645, 151643], "pad_token_id": 151643,
                 "temperature": 0.6, "top_k": 20, "top_p": 0.95, "transformers_version": "4.51.0"}""");
        assertEquals(List.of(151645, 151643), config.eosTokenIds());
        SamplingParams params = config.samplingParams();
        assertEquals(0.6f, params.temperature());
        assertEquals(20, params.topK());
        assertEquals(0.95f, params.topP());
        assertEquals(0f, params.minP());
        assertEquals(1f, params.repeatPenalty());
    }

    @Test
    void withoutTheFileSamplingIsOnWithHuggingFaceDefaults() {
        GenerationConfig config = GenerationConfig.read(dir);
        assertEquals(List.of(), config.eosTokenIds());
        SamplingParams params = config.samplingParams();
        assertEquals(1f, params.temperature());
        assertEquals(50, params.topK());
        assertEquals(1f, params.topP());
    }

    @Test
    void doSampleFalseMeansGreedyButKeepsThePenalty() throws IOException {
        SamplingParams params = readConfig("""
                {"do_sample": false, "temperature": 0.7, "repetition_penalty": 1.3, "eos_token_id": 2}""")
                .samplingParams();
        assertTrue(params.isGreedy());
        assertEquals(1.3f, params.repeatPenalty());
        assertEquals(List.of(2), GenerationConfig.read(dir).eosTokenIds());
    }

    @Test
    void missingFieldsTakeHuggingFaceDefaultsAndNullDisables() throws IOException {
        SamplingParams params = readConfig("""
                {"temperature": 0.8, "top_k": null, "min_p": 0.05}""").samplingParams();
        assertEquals(0.8f, params.temperature());
        assertEquals(0, params.topK(), "top_k null disables top-k");
        assertEquals(1f, params.topP());
        assertEquals(0.05f, params.minP());
    }

    @Test
    void flagsOverrideOnlyWhatWasGiven() {
        SamplingParams base = new SamplingParams(0.6f, 20, 0.95f, 0f, 1f, 7L);
        SamplingParams changed = base.withOverrides(0f, null, 0.5f, null, 1.1f, 99L);
        assertEquals(new SamplingParams(0f, 20, 0.5f, 0f, 1.1f, 99L), changed);
        assertEquals(base, base.withOverrides(null, null, null, null, null, null));
    }

    @Test
    void eachUnseededRunGetsItsOwnSeed() {
        GenerationConfig config = GenerationConfig.defaults();
        assertTrue(config.samplingParams().seed() != config.samplingParams().seed());
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
    }

    @Test
    void aBrokenFileIsOneErrorNamingIt() throws IOException {
        FsException e = assertThrows(FsException.class, () -> readConfig("{\"top_k\": "));
        assertTrue(e.getMessage().contains("generation_config.json"), e.getMessage());
        FsException range = assertThrows(FsException.class, () -> readConfig("{\"top_p\": 2}").samplingParams());
        assertTrue(range.getMessage().startsWith("generation_config.json: top-p"), range.getMessage());
    }
}
