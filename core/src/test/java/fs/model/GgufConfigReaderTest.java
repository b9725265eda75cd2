package fs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.FsException;
import fs.gguf.GgufFile;
import fs.gguf.GgufValueType;
import fs.gguf.GgufWriter;
import fs.gguf.QTied;
import fs.tensor.DType;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

class GgufConfigReaderTest {
    private static final List<String> TYPES = QTied.TYPES;

    @TempDir
    Path dir;

    @ParameterizedTest
    @FieldSource("TYPES")
    void theMetadataOfEveryQTiedFileGivesTheCheckpointsConfigJson(String fileType) {
        ModelConfig json = ModelConfig.read(QTied.dir().resolve("config.json"));
        ModelConfig expected = new ModelConfig(json.architecture(), json.hiddenSize(), json.numHiddenLayers(),
                json.numAttentionHeads(), json.numKeyValueHeads(), json.headDim(), json.feedForward(), json.vocabSize(), json.rmsNormEps(),
                json.ropeTheta(), json.ropeScaling(), json.maxPositionEmbeddings(), json.tieWordEmbeddings(),
                json.bosTokenId(),
                json.eosTokenIds(), "gguf");
        try (GgufFile gguf = GgufFile.open(QTied.gguf(fileType))) {
            assertEquals(expected, GgufConfigReader.read(gguf));
        }
    }

    /** The keys of a small valid qwen3 file, each a step that writes it, so a test can leave one out or change it. */
    private static Map<String, Consumer<GgufWriter>> keys(int hidden, int heads, int headDim) {
        Map<String, Consumer<GgufWriter>> keys = new LinkedHashMap<>();
        keys.put("general.architecture", w -> w.string("general.architecture", "qwen3"));
        keys.put("qwen3.block_count", w -> w.u64("qwen3.block_count", 2)); // u64, as some writers store counts
        keys.put("qwen3.context_length", w -> w.u32("qwen3.context_length", 4096));
        keys.put("qwen3.embedding_length", w -> w.u32("qwen3.embedding_length", hidden));
        keys.put("qwen3.feed_forward_length", w -> w.u32("qwen3.feed_forward_length", 3 * hidden));
        keys.put("qwen3.attention.head_count", w -> w.u32("qwen3.attention.head_count", heads));
        keys.put("qwen3.attention.head_count_kv", w -> w.u32("qwen3.attention.head_count_kv", heads / 2));
        keys.put("qwen3.attention.key_length", w -> w.u32("qwen3.attention.key_length", headDim));
        keys.put("qwen3.attention.value_length", w -> w.u32("qwen3.attention.value_length", headDim));
        keys.put("qwen3.attention.layer_norm_rms_epsilon", w -> w.f32("qwen3.attention.layer_norm_rms_epsilon", 1e-6f));
        keys.put("qwen3.rope.freq_base", w -> w.f32("qwen3.rope.freq_base", 1e6f));
        keys.put("tokenizer.ggml.tokens", w -> w.array("tokenizer.ggml.tokens", GgufValueType.STRING, "a", "b", "c"));
        keys.put("tokenizer.ggml.bos_token_id", w -> w.u32("tokenizer.ggml.bos_token_id", 1));
        keys.put("tokenizer.ggml.eos_token_id", w -> w.u32("tokenizer.ggml.eos_token_id", 2));
        return keys;
    }

    private Path write(String name, Map<String, Consumer<GgufWriter>> keys, int hidden, boolean withOutput) {
        GgufWriter writer = new GgufWriter();
        keys.values().forEach(step -> step.accept(writer));
        writer.tensor("token_embd.weight", DType.F32, new long[] {hidden, 4}, new byte[16 * hidden]);
        if (withOutput) writer.tensor("output.weight", DType.F32, new long[] {hidden, 4}, new byte[16 * hidden]);
        return writer.write(dir.resolve(name));
    }

    private static ModelConfig read(Path file) {
        try (GgufFile gguf = GgufFile.open(file)) {
            return GgufConfigReader.read(gguf);
        }
    }

    @Test
    void headDimIsTheKeyLengthNotHiddenOverHeadsAndOutputWeightUnties() {
        // Qwen3-0.6B's shape: 1024 / 16 = 64, but its heads are 128 wide.
        ModelConfig tied = read(write("wide-heads.gguf", keys(1024, 16, 128), 1024, false));
        assertEquals(128, tied.headDim());
        assertEquals(2048, tied.queryDim());
        assertEquals(2, tied.numHiddenLayers());
        assertEquals(8, tied.numKeyValueHeads());
        assertEquals(4, tied.vocabSize()); // the embedding's rows, not the 3 listed tokens
        assertTrue(tied.tieWordEmbeddings());
        assertEquals(List.of(2), tied.eosTokenIds());
        assertFalse(read(write("untied.gguf", keys(16, 4, 8), 16, true)).tieWordEmbeddings());
    }

    private void assertFails(Path file, String... parts) {
        FsException e = assertThrows(FsException.class, () -> read(file));
        assertTrue(e.getMessage().startsWith(file.toString()), "names the file: " + e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        for (String part : parts) assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
    }

    @Test
    void everyRequiredKeyMissingIsNamed() {
        for (String key : keys(16, 4, 8).keySet()) {
            if (key.equals("qwen3.attention.head_count_kv") || key.equals("qwen3.attention.value_length")
                    || key.equals("tokenizer.ggml.tokens")) {
                continue; // optional: kv heads default to the heads, the others are only cross-checked
            }
            Map<String, Consumer<GgufWriter>> keys = keys(16, 4, 8);
            keys.remove(key);
            assertFails(write("without-" + key + ".gguf", keys, 16, false), "key '" + key + "' is missing");
        }
    }

    /** ModelConfig checks these for every format: a GGUF gets the line a config.json gets, not an engine failure. */
    @Test
    void shapesAndIdsTheEngineCannotRunAreOneLineAsFromConfigJson() {
        Map<String, Consumer<GgufWriter>> keys = keys(16, 4, 8);
        keys.put("qwen3.attention.head_count_kv", w -> w.u32("qwen3.attention.head_count_kv", 3));
        assertFails(write("groups.gguf", keys, 16, false), "attention heads (4) are not a multiple of the key-value heads (3)");

        // An odd head_dim used to pass the reader and fail in Rope with an IllegalArgumentException.
        assertFails(write("odd-heads.gguf", keys(16, 4, 7), 16, false), "head dimension (7) is odd");

        keys = keys(16, 4, 8);
        keys.put("tokenizer.ggml.eos_token_id", w -> w.u32("tokenizer.ggml.eos_token_id", 4));
        assertFails(write("eos.gguf", keys, 16, false), "eos token id 4 is outside the vocabulary (0..3)");
    }

    @Test
    void mistypedAndInconsistentKeysAreNamed() {
        Map<String, Consumer<GgufWriter>> keys = keys(16, 4, 8);
        keys.put("qwen3.block_count", w -> w.string("qwen3.block_count", "2"));
        assertFails(write("text-count.gguf", keys, 16, false), "key 'qwen3.block_count'", "must be an integer",
                "found a string '2'");

        keys = keys(16, 4, 8);
        keys.put("qwen3.attention.head_count", w -> w.i32("qwen3.attention.head_count", -4));
        assertFails(write("negative.gguf", keys, 16, false), "key 'qwen3.attention.head_count'", "from 0 to");

        keys = keys(16, 4, 8);
        keys.put("qwen3.rope.freq_base", w -> w.string("qwen3.rope.freq_base", "1e6"));
        assertFails(write("text-rope.gguf", keys, 16, false), "key 'qwen3.rope.freq_base'", "must be a number");

        keys = keys(16, 4, 8);
        keys.put("general.architecture", w -> w.string("general.architecture", "llama"));
        assertFails(write("llama.gguf", keys, 16, false), "key 'general.architecture'", "'llama'", "'qwen3'");

        keys = keys(16, 4, 8);
        keys.put("qwen3.attention.value_length", w -> w.u32("qwen3.attention.value_length", 16));
        assertFails(write("value-length.gguf", keys, 16, false), "key 'qwen3.attention.value_length'", "(16)");

        keys = keys(16, 4, 8);
        keys.put("qwen3.rope.scaling.type", w -> w.string("qwen3.rope.scaling.type", "yarn"));
        assertFails(write("yarn.gguf", keys, 16, false), "key 'qwen3.rope.scaling.type'", "only plain RoPE");

        keys = keys(16, 4, 8);
        keys.put("tokenizer.ggml.tokens", w -> w.array("tokenizer.ggml.tokens", GgufValueType.STRING, "a", "b", "c",
                "d", "e"));
        assertFails(write("tokens.gguf", keys, 16, false), "key 'tokenizer.ggml.tokens'", "5 tokens", "4 rows");

        assertFails(write("narrow-embedding.gguf", keys(32, 4, 8), 16, false), "tensor 'token_embd.weight'",
                "expected [vocabulary, 32]");
    }
}
