package fs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class Qwen3ConfigTest {
    /** Qwen/Qwen3-0.6B's config.json as published (transformers 4.51). */
    private static final String QWEN3_0_6B = """
            {
              "architectures": ["Qwen3ForCausalLM"],
              "attention_bias": false,
              "attention_dropout": 0.0,
              "bos_token_id": 151643,
              "eos_token_id": 151645,
              "head_dim": 128,
              "hidden_act": "silu",
              "hidden_size": 1024,
              "initializer_range": 0.02,
              "intermediate_size": 3072,
              "max_position_embeddings": 40960,
              "max_window_layers": 28,
              "model_type": "qwen3",
              "num_attention_heads": 16,
              "num_hidden_layers": 28,
              "num_key_value_heads": 8,
              "rms_norm_eps": 1e-06,
              "rope_scaling": null,
              "rope_theta": 1000000,
              "sliding_window": null,
              "tie_word_embeddings": true,
              "torch_dtype": "bfloat16",
              "transformers_version": "4.51.0",
              "use_cache": true,
              "use_sliding_window": false,
              "vocab_size": 151936
            }
            """;

    @TempDir
    Path dir;

    private Path write(String json) throws IOException {
        return Files.writeString(dir.resolve("config.json"), json);
    }

    /** Qwen3-0.6B's config with one edit applied. */
    private Path edited(Consumer<ObjectNode> edit) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = (ObjectNode) mapper.readTree(QWEN3_0_6B);
        edit.accept(root);
        return write(mapper.writeValueAsString(root));
    }

    private static void readFails(Path file, String... parts) {
        FsException e = assertThrows(FsException.class, () -> Qwen3Config.read(file));
        assertTrue(e.getMessage().contains(file.toString()), "names the file: " + e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        for (String part : parts) assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
    }

    @Test
    void readsQwen3_0_6B() throws IOException {
        Qwen3Config config = Qwen3Config.read(write(QWEN3_0_6B));
        assertEquals(new Qwen3Config(1024, 28, 16, 8, 128, 3072, 151936, 1e-6f, 1_000_000f, 40960, true, 151643,
                List.of(151645), "bfloat16"), config);
        assertEquals(2048, config.queryDim());
        assertEquals(1024, config.kvDim());
    }

    @Test
    void defaultsKvHeadsHeadDimAndTying() throws IOException {
        Qwen3Config config = Qwen3Config.read(edited(root -> {
            root.remove("num_key_value_heads");
            root.remove("head_dim");
            root.remove("tie_word_embeddings");
        }));
        assertEquals(16, config.numKeyValueHeads());
        assertEquals(1024 / 16, config.headDim());
        assertFalse(config.tieWordEmbeddings());
    }

    @Test
    void readsAListOfEosIdsAndTheTransformers5Layout() throws IOException {
        Qwen3Config config = Qwen3Config.read(edited(root -> {
            root.putArray("eos_token_id").add(151645).add(151643);
            root.remove("rope_theta");
            root.putObject("rope_parameters").put("rope_theta", 5e6).put("rope_type", "default");
            root.remove("torch_dtype");
            root.put("dtype", "float16");
        }));
        assertEquals(List.of(151645, 151643), config.eosTokenIds());
        assertEquals(5e6f, config.ropeTheta());
        assertEquals("float16", config.torchDtype());
    }

    @Test
    void rejectsAMissingRequiredField() throws IOException {
        for (String field : List.of("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                "vocab_size", "rms_norm_eps", "rope_theta", "max_position_embeddings", "bos_token_id", "eos_token_id",
                "torch_dtype", "model_type")) {
            readFails(edited(root -> root.remove(field)), field, "missing");
        }
    }

    @Test
    void rejectsNonNumericAndOutOfRangeValues() throws IOException {
        readFails(edited(root -> root.put("hidden_size", "1024")), "hidden_size", "positive integer", "\"1024\"");
        readFails(edited(root -> root.put("num_hidden_layers", 2.5)), "num_hidden_layers", "positive integer");
        readFails(edited(root -> root.put("vocab_size", 0)), "vocab_size", "positive integer");
        readFails(edited(root -> root.put("intermediate_size", 1L << 40)), "intermediate_size", "positive integer");
        readFails(edited(root -> root.put("rms_norm_eps", "tiny")), "rms_norm_eps", "positive number");
        readFails(edited(root -> root.put("rms_norm_eps", 1e-50)), "rms_norm_eps", "positive number"); // 0 as a float
        readFails(edited(root -> root.put("rope_theta", -1)), "rope_theta", "positive number");
        readFails(edited(root -> root.put("tie_word_embeddings", "yes")), "tie_word_embeddings", "true or false");
        readFails(edited(root -> root.putArray("eos_token_id")), "eos_token_id", "empty");
        readFails(edited(root -> root.putArray("eos_token_id").add("end")), "eos_token_id", "token id");
        readFails(edited(root -> root.put("num_key_value_heads", 5)), "num_attention_heads (16)", "(5)");
    }

    @Test
    void rejectsOtherModels() throws IOException {
        readFails(edited(root -> root.put("model_type", "llama")), "model_type is 'llama'", "'qwen3'");
        readFails(edited(root -> root.putArray("architectures").add("Qwen3ForSequenceClassification")),
                "architectures", "Qwen3ForCausalLM");
        readFails(edited(root -> root.put("architectures", "Qwen3ForCausalLM")), "architectures must be a list");
        readFails(edited(root -> root.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4)),
                "rope_scaling", "'yarn'");
    }

    @Test
    void rejectsAMissingOrGarbledFile() throws IOException {
        readFails(dir.resolve("absent.json"), "no such file");
        readFails(write("{\"hidden_size\": 1024,"), "malformed JSON");
        readFails(write("[]"), "expected a JSON object");
        readFails(write("{\"hidden_size\": 1, \"hidden_size\": 2}"), "Duplicate", "hidden_size");
        readFails(dir, "is a directory");
    }
}
