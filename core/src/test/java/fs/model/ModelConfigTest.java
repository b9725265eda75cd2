package fs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.backend.Rope;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelConfigTest {
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

    /** Qwen3-30B-A3B's config.json, as Hugging Face ships it. */
    private static final String QWEN3_30B_A3B = """
            {
              "architectures": ["Qwen3MoeForCausalLM"],
              "attention_bias": false,
              "attention_dropout": 0.0,
              "bos_token_id": 151643,
              "decoder_sparse_step": 1,
              "eos_token_id": 151645,
              "head_dim": 128,
              "hidden_act": "silu",
              "hidden_size": 2048,
              "initializer_range": 0.02,
              "intermediate_size": 6144,
              "max_position_embeddings": 40960,
              "max_window_layers": 48,
              "mlp_only_layers": [],
              "model_type": "qwen3_moe",
              "moe_intermediate_size": 768,
              "norm_topk_prob": true,
              "num_attention_heads": 32,
              "num_experts": 128,
              "num_experts_per_tok": 8,
              "num_hidden_layers": 48,
              "num_key_value_heads": 4,
              "output_router_logits": false,
              "rms_norm_eps": 1e-06,
              "rope_scaling": null,
              "rope_theta": 1000000.0,
              "router_aux_loss_coef": 0.001,
              "sliding_window": null,
              "tie_word_embeddings": false,
              "torch_dtype": "bfloat16",
              "transformers_version": "4.51.0",
              "use_cache": true,
              "use_sliding_window": false,
              "vocab_size": 151936
            }
            """;

    /** Every layer sparse, and the sizes its model card gives: 30.5B parameters, 3.3B of them active per token. */
    @Test
    void readsQwen3_30B_A3B() throws IOException {
        ModelConfig config = ModelConfig.read(write(QWEN3_30B_A3B));
        assertEquals(new Qwen3Moe(), config.architecture());
        assertEquals(48, config.feedForward().size());
        for (FeedForward layer : config.feedForward()) {
            assertEquals(new FeedForward.Experts(128, 8, 768, true), layer);
        }
        assertEquals(4096, config.queryDim());
        assertEquals(512, config.kvDim());
        ParameterCount parameters = ParameterCount.of(config);
        assertEquals("30.5B", ParameterCount.label(parameters.total()));
        assertEquals(3.3e9, parameters.active(), 0.1e9);
    }

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
        FsException e = assertThrows(FsException.class, () -> ModelConfig.read(file));
        assertTrue(e.getMessage().contains(file.toString()), "names the file: " + e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        for (String part : parts) assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
    }

    @Test
    void readsQwen3_0_6B() throws IOException {
        ModelConfig config = ModelConfig.read(write(QWEN3_0_6B));
        assertEquals(new ModelConfig(new Qwen3(), 1024, 28, 16, 8, 128,
                java.util.Collections.nCopies(28, new FeedForward.Dense(3072)), 151936, 1e-6f, 1_000_000f, new RopeScaling.Plain(),
                40960, true, 151643, List.of(151645), "bfloat16"), config);
        assertEquals(2048, config.queryDim());
        assertEquals(1024, config.kvDim());
    }

    @Test
    void defaultsKvHeadsHeadDimAndTying() throws IOException {
        ModelConfig config = ModelConfig.read(edited(root -> {
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
        ModelConfig config = ModelConfig.read(edited(root -> {
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
        readFails(edited(root -> root.put("hidden_size", "1024")), "hidden_size", "positive integer", "'1024'");
        readFails(edited(root -> root.put("num_hidden_layers", 2.5)), "num_hidden_layers", "positive integer");
        readFails(edited(root -> root.put("vocab_size", 0)), "vocab_size", "positive integer");
        readFails(edited(root -> root.put("intermediate_size", 1L << 40)), "intermediate_size", "positive integer");
        readFails(edited(root -> root.put("rms_norm_eps", "tiny")), "rms_norm_eps", "positive number");
        readFails(edited(root -> root.put("rms_norm_eps", 1e-50)), "rms_norm_eps", "positive number"); // 0 as a float
        readFails(edited(root -> root.put("rope_theta", -1)), "rope_theta", "positive number");
        readFails(edited(root -> root.put("tie_word_embeddings", "yes")), "tie_word_embeddings", "true or false");
        readFails(edited(root -> root.putArray("eos_token_id")), "eos_token_id", "empty");
        readFails(edited(root -> root.putArray("eos_token_id").add("end")), "eos_token_id", "token id");
        readFails(edited(root -> root.put("num_key_value_heads", 5)), "attention heads (16)", "key-value heads (5)");
    }

    @Test
    void rejectsOtherModels() throws IOException {
        readFails(edited(root -> root.put("model_type", "llama")), "model_type is 'llama'", "'qwen3', 'qwen3_moe'");
        // each architecture by its own class: a dense config cannot call itself the MoE's, nor the other way round
        readFails(edited(root -> root.put("model_type", "qwen3_moe")), "architectures", "Qwen3MoeForCausalLM");
        readFails(edited(root -> root.putArray("architectures").add("Qwen3ForSequenceClassification")),
                "architectures", "Qwen3ForCausalLM");
        readFails(edited(root -> root.put("architectures", "Qwen3ForCausalLM")), "architectures must be a list");
    }

    private static final double YARN_ATTENTION_FACTOR_4 = 1 + 0.1 * Math.log(4);

    /** Qwen3-0.6B's config with rope_scaling set to {@code json}. */
    private Path withRopeScaling(String json) throws IOException {
        ObjectNode scaling = (ObjectNode) new ObjectMapper().readTree(json);
        return edited(root -> root.set("rope_scaling", scaling));
    }

    @Test
    void readsQwen3sDocumentedYarn() throws IOException {
        // As Qwen3's model cards document it for contexts beyond 32K; max_position_embeddings stays 40960.
        ModelConfig config = ModelConfig.read(withRopeScaling("""
                {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}"""));
        // The factor is used as given, as transformers does since August 2025 (it used to take 40960 / 32768 = 1.25).
        RopeScaling.Yarn expected = new RopeScaling.Yarn(4, 32768, 32, 1, YARN_ATTENTION_FACTOR_4, true);
        assertEquals(expected, config.ropeScaling());
        assertEquals(expected.rope(128, 1e6), config.rope());
    }

    @Test
    void readsEveryYarnFieldAndTheLegacyAndTransformers5Layouts() throws IOException {
        ModelConfig all = ModelConfig.read(withRopeScaling("""
                {"type": "yarn", "factor": 8, "original_max_position_embeddings": 4096, "beta_fast": 16,
                 "beta_slow": 2.5, "attention_factor": 1.5, "mscale": 1, "mscale_all_dim": 1, "truncate": false}"""));
        assertEquals(new RopeScaling.Yarn(8, 4096, 16, 2.5, 1.5, false), all.ropeScaling());

        // No original_max_position_embeddings: transformers takes max_position_embeddings; nulls are defaults.
        ModelConfig deepSeekStyle = ModelConfig.read(withRopeScaling("""
                {"rope_type": "yarn", "type": "yarn", "factor": 40, "mscale": 0.707, "mscale_all_dim": 1.0,
                 "beta_fast": null, "attention_factor": null, "truncate": null}"""));
        assertEquals(new RopeScaling.Yarn(40, 40960, 32, 1, RopeScaling.Yarn.defaultAttentionFactor(40, 0.707, 1.0),
                true), deepSeekStyle.ropeScaling());

        ModelConfig transformers5 = ModelConfig.read(edited(root -> {
            root.remove("rope_theta");
            root.remove("rope_scaling");
            root.putObject("rope_parameters").put("rope_type", "yarn").put("rope_theta", 5e6).put("factor", 2)
                    .put("original_max_position_embeddings", 20480);
        }));
        assertEquals(5e6f, transformers5.ropeTheta());
        assertEquals(new RopeScaling.Yarn(2, 20480, 32, 1, 1 + 0.1 * Math.log(2), true), transformers5.ropeScaling());
    }

    @Test
    void aTopLevelOriginalMaxPositionEmbeddingsIsYarnsWhenRopeScalingHasNone() throws IOException {
        ModelConfig config = ModelConfig.read(edited(root -> {
            root.put("original_max_position_embeddings", 8192);
            root.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4);
        }));
        assertEquals(8192, ((RopeScaling.Yarn) config.ropeScaling()).originalMaxPositionEmbeddings());
        readFails(edited(root -> {
            root.put("original_max_position_embeddings", 8192);
            root.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4)
                    .put("original_max_position_embeddings", 32768);
        }), "rope_scaling.original_max_position_embeddings (32768)", "(8192)", "differ");
    }

    @Test
    void plainRopeComesFromNullAbsentEmptyAndDefaultRopeScaling() throws IOException {
        Rope plain = Rope.plain(128, 1e6);
        assertEquals(plain, ModelConfig.read(write(QWEN3_0_6B)).rope());
        assertEquals(plain, ModelConfig.read(edited(root -> root.remove("rope_scaling"))).rope());
        assertEquals(plain, ModelConfig.read(withRopeScaling("{}")).rope());
        assertEquals(plain, ModelConfig.read(withRopeScaling("""
                {"rope_type": "default", "rope_theta": 1000000}""")).rope());
        assertEquals(new RopeScaling.Plain(), ModelConfig.read(withRopeScaling("""
                {"type": "default"}""")).ropeScaling());
    }

    @Test
    void rejectsRopeTypesFsDoesNotImplementByName() throws IOException {
        for (String type : List.of("linear", "dynamic", "longrope", "llama3", "su", "proportional")) {
            readFails(withRopeScaling("{\"rope_type\": \"" + type + "\", \"factor\": 4}"),
                    "rope_scaling of type '" + type + "' is not supported", "plain RoPE and YaRN");
        }
        readFails(withRopeScaling("""
                {"type": "linear", "factor": 4}"""), "rope_scaling of type 'linear'");
        readFails(edited(root -> root.putObject("rope_parameters").put("rope_type", "dynamic").put("factor", 2)),
                "rope_parameters of type 'dynamic' is not supported");
    }

    /** Qwen3-0.6B's config with rope_scaling {"rope_type": "yarn", FIELDS}. */
    private Path yarnWith(String fields) throws IOException {
        return withRopeScaling("{\"rope_type\": \"yarn\", " + fields + "}");
    }

    @Test
    void rejectsMalformedYarnFields() throws IOException {
        readFails(yarnWith("\"original_max_position_embeddings\": 32768"), "rope_scaling.factor is missing");
        readFails(yarnWith("\"factor\": null"), "rope_scaling.factor is missing");
        readFails(yarnWith("\"factor\": 0.5"), "rope_scaling.factor must be a number of at least 1", "0.5");
        readFails(yarnWith("\"factor\": \"4\""), "rope_scaling.factor must be a number", "string '4'");
        readFails(yarnWith("\"factor\": 4, \"original_max_position_embeddings\": 0"),
                "rope_scaling.original_max_position_embeddings must be a positive integer");
        readFails(yarnWith("\"factor\": 4, \"original_max_position_embeddings\": 32768.5"),
                "rope_scaling.original_max_position_embeddings must be a positive integer");
        readFails(yarnWith("\"factor\": 4, \"beta_fast\": \"32\""), "rope_scaling.beta_fast must be a number");
        readFails(yarnWith("\"factor\": 4, \"beta_slow\": -1"), "rope_scaling.beta_slow must be a positive number");
        readFails(yarnWith("\"factor\": 4, \"beta_fast\": 1, \"beta_slow\": 2"),
                "rope_scaling.beta_fast (1.0) is below rope_scaling.beta_slow (2.0)");
        readFails(yarnWith("\"factor\": 4, \"attention_factor\": 0"),
                "rope_scaling.attention_factor must be a positive number");
        readFails(yarnWith("\"factor\": 4, \"mscale\": -1, \"mscale_all_dim\": 1"), "rope_scaling.mscale", "negative");
        readFails(yarnWith("\"factor\": 4, \"truncate\": \"yes\""), "rope_scaling.truncate must be true or false");
        readFails(edited(root -> {
            root.put("rope_theta", 1);
            root.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4);
        }), "rope_theta must be above 1 for YaRN");
    }

    @Test
    void rejectsRopeKeysFsDoesNotRead() throws IOException {
        readFails(yarnWith("\"factor\": 4, \"partial_rotary_factor\": 0.5"),
                "rope_scaling key 'partial_rotary_factor' is not supported with rope type 'yarn'", "fs reads");
        readFails(yarnWith("\"factor\": 4, \"low_freq_factor\": 1"), "rope_scaling key 'low_freq_factor' is not supported");
        readFails(withRopeScaling("""
                {"factor": 4}"""), "rope_scaling key 'factor' is not supported with rope type 'default'");
    }

    @Test
    void rejectsAmbiguousOrMistypedRopeSettings() throws IOException {
        readFails(edited(root -> root.put("rope_scaling", "yarn")), "rope_scaling must be an object or null", "string");
        readFails(withRopeScaling("""
                {"rope_type": 5}"""), "rope_scaling.rope_type must be a string", "5");
        readFails(yarnWith("\"type\": \"linear\", \"factor\": 4"),
                "rope_scaling.rope_type (string 'yarn') and rope_scaling.type (string 'linear') differ");
        readFails(edited(root -> {
            root.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4);
            root.putObject("rope_parameters").put("rope_type", "default");
        }), "rope_scaling and rope_parameters are both set and differ");
        readFails(edited(root -> root.putObject("rope_parameters").put("rope_type", "default").put("rope_theta", 5e6)),
                "rope_theta (1000000.0) and rope_parameters.rope_theta (5000000.0) differ");
    }

    @Test
    void rejectsFieldsThatChangeTheMathFsDoesNotImplement() throws IOException {
        readFails(edited(root -> root.put("hidden_act", "gelu")), "hidden_act is 'gelu'", "silu");
        readFails(edited(root -> root.put("attention_bias", true)), "attention_bias", "true");
        readFails(edited(root -> root.put("use_sliding_window", true)), "use_sliding_window", "true");
        readFails(edited(root -> root.putArray("layer_types").add("full_attention").add("sliding_attention")),
                "layer_types", "'sliding_attention'");
        readFails(edited(root -> root.put("attention_bias", "no")), "attention_bias", "true or false");
        // Their defaults, and Qwen3-0.6B's values, are what fs implements.
        ModelConfig.read(edited(root -> {
            root.remove("hidden_act");
            root.remove("attention_bias");
            root.remove("use_sliding_window");
            root.putArray("layer_types").add("full_attention");
        }));
    }

    @Test
    void rejectsTokenIdsOutsideTheVocabulary() throws IOException {
        readFails(edited(root -> root.put("bos_token_id", 151936)), "bos token id 151936", "vocabulary", "151935");
        readFails(edited(root -> root.put("eos_token_id", 200000)), "eos token id 200000", "vocabulary");
        readFails(edited(root -> root.putArray("eos_token_id").add(151645).add(151936)), "eos token id 151936");
    }

    @Test
    void rejectsHeadShapesTheEngineCannotAddress() throws IOException {
        // 65536 heads of 65536 would make a query width of 2^32, which wraps to 0 in an int.
        readFails(edited(root -> {
            root.put("num_attention_heads", 65536);
            root.put("num_key_value_heads", 65536);
            root.put("head_dim", 65536);
        }), "attention heads (65536)", "head dimension (65536)", "too large");
        readFails(edited(root -> root.put("head_dim", 127)), "head dimension (127) is odd");
    }

    @Test
    void rejectsAMissingOrGarbledFile() throws IOException {
        readFails(dir.resolve("absent.json"), "no such file");
        readFails(write("{\"hidden_size\": 1024,"), "malformed JSON");
        readFails(write("[]"), "expected a JSON object");
        readFails(write("{\"hidden_size\": 1, \"hidden_size\": 2}"), "Duplicate", "hidden_size");
        readFails(dir, "is a directory");
    }

    @Test
    void describesBadJsonInPlainWordsWithoutJacksonInternals() throws IOException {
        String[][] cases = {
            {"null", "expected a JSON object, found null"},
            {"{\"hidden_size\": " + "[".repeat(1500) + "]".repeat(1500) + "}", "nested more than 1000 levels deep"},
            {"{\"hidden_size\": 1" + "0".repeat(1500) + "}", "number longer than 1000 digits"},
            {"{\"rms_norm_eps\": NaN}", "'NaN' is not a JSON value"},
            {"{\"hidden_size\": 1} {}", "more JSON follows the object"},
            {"{\"hidden_size\": {\"a\": 1}", "ends before the '}'", "line 1, column 1 "},
            {"{\"hidden_size\": [1, 2}", "'}' where ']' should close the array"},
        };
        for (String[] c : cases) {
            FsException e = assertThrows(FsException.class, () -> ModelConfig.read(write(c[0])));
            String message = e.getMessage();
            for (int i = 1; i < c.length; i++) assertTrue(message.contains(c[i]), "'" + c[i] + "' in: " + message);
            for (String internal : List.of("`", "Constraints", "Feature", "OBJECT", "ARRAY", "marker", "java")) {
                assertFalse(message.contains(internal), "no '" + internal + "' in: " + message);
            }
        }
    }

    /** A value of the file holding a line break, or 2,000 characters, is shown quoted and cut: one short line. */
    @Test
    void quotesValuesFromTheFileOnOneShortLine() throws IOException {
        String odd = "qw\nen3" + "x".repeat(2000);
        for (Path file : List.of(
                edited(root -> root.put("model_type", odd)),
                edited(root -> root.putArray("architectures").add(odd)),
                edited(root -> root.put("hidden_act", odd)),
                edited(root -> root.putArray("layer_types").add(odd)),
                edited(root -> root.putObject("rope_scaling").put("rope_type", odd)),
                edited(root -> root.putObject("rope_scaling").put("rope_type", "yarn").put(odd, 1)))) {
            FsException e = assertThrows(FsException.class, () -> ModelConfig.read(file));
            // Quoted as text, the line break as an escape; inside a list, as the list's JSON (with a backslash-n).
            assertTrue(e.getMessage().matches(".*qw\\\\(u000a|n)en3x+….*"), "the line break escaped: " + e.getMessage());
            assertTrue(e.getMessage().length() < file.toString().length() + 300, "short: " + e.getMessage());
        }
        readFails(edited(root -> root.put("model_type", odd)), "model_type is 'qw\\u000aen3" + "x".repeat(54) + "…'");
    }
}
