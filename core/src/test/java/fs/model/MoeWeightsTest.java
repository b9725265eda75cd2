package fs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.gguf.GgufValueType;
import fs.gguf.GgufWriter;
import fs.safetensors.SafetensorsWriter;
import fs.source.ModelSource;
import fs.tensor.DType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Qwen3-MoE model that does not hold together — a missing expert, more experts per token than experts, an expert
 * stack or a router of the wrong shape, a dense layer outside the model — is one FsException of one line that names
 * the tensor or the key, from a Hugging Face checkpoint (per-expert tensors) and from a GGUF file (one stack per
 * layer and role), both written here small: hidden 16, 2 layers, 4 experts of width 8, 2 per token.
 */
class MoeWeightsTest {
    private static final int HIDDEN = 16, HEADS = 2, KV_HEADS = 1, HEAD_DIM = 8, LAYERS = 2, VOCAB = 32;
    private static final int EXPERTS = 4, USED = 2, EXPERT_WIDTH = 8, DENSE_WIDTH = 24;

    @TempDir
    Path dir;

    // ---- Hugging Face: config.json and one model.safetensors of per-expert tensors -------------------------------

    private static ObjectNode config() {
        ObjectNode c = new ObjectMapper().createObjectNode();
        c.putArray("architectures").add("Qwen3MoeForCausalLM");
        c.put("model_type", "qwen3_moe");
        c.put("hidden_size", HIDDEN);
        c.put("num_attention_heads", HEADS);
        c.put("num_key_value_heads", KV_HEADS);
        c.put("head_dim", HEAD_DIM);
        c.put("num_hidden_layers", LAYERS);
        c.put("vocab_size", VOCAB);
        c.put("rms_norm_eps", 1e-6);
        c.put("rope_theta", 1e6);
        c.put("max_position_embeddings", 4096);
        c.put("tie_word_embeddings", true);
        c.put("bos_token_id", 1);
        c.put("eos_token_id", 2);
        c.put("torch_dtype", "bfloat16");
        c.put("num_experts", EXPERTS);
        c.put("num_experts_per_tok", USED);
        c.put("moe_intermediate_size", EXPERT_WIDTH);
        c.put("norm_topk_prob", true);
        c.put("intermediate_size", DENSE_WIDTH);
        c.put("decoder_sparse_step", 1);
        c.putArray("mlp_only_layers").add(1); // layer 1 dense, as tiny-moe has it
        return c;
    }

    /** [out, in] shapes of every tensor of {@link #config()}'s model: layer 0 sparse, layer 1 dense. */
    private static Map<String, long[]> shapes() {
        Map<String, long[]> s = new LinkedHashMap<>();
        s.put("model.embed_tokens.weight", new long[] {VOCAB, HIDDEN});
        s.put("model.norm.weight", new long[] {HIDDEN});
        for (int l = 0; l < LAYERS; l++) {
            String p = "model.layers." + l + ".";
            s.put(p + "input_layernorm.weight", new long[] {HIDDEN});
            s.put(p + "self_attn.q_proj.weight", new long[] {HEADS * HEAD_DIM, HIDDEN});
            s.put(p + "self_attn.k_proj.weight", new long[] {KV_HEADS * HEAD_DIM, HIDDEN});
            s.put(p + "self_attn.v_proj.weight", new long[] {KV_HEADS * HEAD_DIM, HIDDEN});
            s.put(p + "self_attn.o_proj.weight", new long[] {HIDDEN, HEADS * HEAD_DIM});
            s.put(p + "self_attn.q_norm.weight", new long[] {HEAD_DIM});
            s.put(p + "self_attn.k_norm.weight", new long[] {HEAD_DIM});
            s.put(p + "post_attention_layernorm.weight", new long[] {HIDDEN});
            if (l == 1) {
                s.put(p + "mlp.gate_proj.weight", new long[] {DENSE_WIDTH, HIDDEN});
                s.put(p + "mlp.up_proj.weight", new long[] {DENSE_WIDTH, HIDDEN});
                s.put(p + "mlp.down_proj.weight", new long[] {HIDDEN, DENSE_WIDTH});
                continue;
            }
            s.put(p + "mlp.gate.weight", new long[] {EXPERTS, HIDDEN});
            for (int e = 0; e < EXPERTS; e++) {
                s.put(p + "mlp.experts." + e + ".gate_proj.weight", new long[] {EXPERT_WIDTH, HIDDEN});
                s.put(p + "mlp.experts." + e + ".up_proj.weight", new long[] {EXPERT_WIDTH, HIDDEN});
                s.put(p + "mlp.experts." + e + ".down_proj.weight", new long[] {HIDDEN, EXPERT_WIDTH});
            }
        }
        return s;
    }

    private Path checkpoint(String name, ObjectNode config, Map<String, long[]> shapes) throws IOException {
        Path model = Files.createDirectories(dir.resolve(name));
        Files.writeString(model.resolve("config.json"), config.toPrettyString());
        SafetensorsWriter writer = new SafetensorsWriter();
        shapes.forEach((tensor, shape) -> writer.zeros(tensor, DType.BF16, shape));
        writer.write(model.resolve("model.safetensors"));
        return model;
    }

    // ---- GGUF: qwen3moe metadata and one [experts, out, in] stack per layer and role -----------------------------

    /** The keys of a valid qwen3moe file, each a step, so a test can leave one out or change it. */
    private static Map<String, Consumer<GgufWriter>> keys() {
        Map<String, Consumer<GgufWriter>> k = new LinkedHashMap<>();
        k.put("general.architecture", w -> w.string("general.architecture", "qwen3moe"));
        k.put("qwen3moe.block_count", w -> w.u32("qwen3moe.block_count", LAYERS));
        k.put("qwen3moe.context_length", w -> w.u32("qwen3moe.context_length", 4096));
        k.put("qwen3moe.embedding_length", w -> w.u32("qwen3moe.embedding_length", HIDDEN));
        k.put("qwen3moe.feed_forward_length", w -> w.u32("qwen3moe.feed_forward_length", DENSE_WIDTH));
        k.put("qwen3moe.attention.head_count", w -> w.u32("qwen3moe.attention.head_count", HEADS));
        k.put("qwen3moe.attention.head_count_kv", w -> w.u32("qwen3moe.attention.head_count_kv", KV_HEADS));
        k.put("qwen3moe.attention.key_length", w -> w.u32("qwen3moe.attention.key_length", HEAD_DIM));
        k.put("qwen3moe.attention.value_length", w -> w.u32("qwen3moe.attention.value_length", HEAD_DIM));
        k.put("qwen3moe.attention.layer_norm_rms_epsilon",
                w -> w.f32("qwen3moe.attention.layer_norm_rms_epsilon", 1e-6f));
        k.put("qwen3moe.rope.freq_base", w -> w.f32("qwen3moe.rope.freq_base", 1e6f));
        k.put("qwen3moe.expert_count", w -> w.u32("qwen3moe.expert_count", EXPERTS));
        k.put("qwen3moe.expert_used_count", w -> w.u32("qwen3moe.expert_used_count", USED));
        k.put("qwen3moe.expert_feed_forward_length", w -> w.u32("qwen3moe.expert_feed_forward_length", EXPERT_WIDTH));
        k.put("tokenizer.ggml.tokens", w -> w.array("tokenizer.ggml.tokens", GgufValueType.STRING, "a", "b", "c"));
        k.put("tokenizer.ggml.bos_token_id", w -> w.u32("tokenizer.ggml.bos_token_id", 1));
        k.put("tokenizer.ggml.eos_token_id", w -> w.u32("tokenizer.ggml.eos_token_id", 2));
        return k;
    }

    /** ggml dims (fastest first) of every tensor of a tied qwen3moe file with {@link #keys()}: every layer sparse. */
    private static Map<String, long[]> dims() {
        Map<String, long[]> d = new LinkedHashMap<>();
        d.put("token_embd.weight", new long[] {HIDDEN, VOCAB});
        d.put("output_norm.weight", new long[] {HIDDEN});
        for (int l = 0; l < LAYERS; l++) {
            String p = "blk." + l + ".";
            d.put(p + "attn_norm.weight", new long[] {HIDDEN});
            d.put(p + "attn_q.weight", new long[] {HIDDEN, HEADS * HEAD_DIM});
            d.put(p + "attn_k.weight", new long[] {HIDDEN, KV_HEADS * HEAD_DIM});
            d.put(p + "attn_v.weight", new long[] {HIDDEN, KV_HEADS * HEAD_DIM});
            d.put(p + "attn_output.weight", new long[] {HEADS * HEAD_DIM, HIDDEN});
            d.put(p + "attn_q_norm.weight", new long[] {HEAD_DIM});
            d.put(p + "attn_k_norm.weight", new long[] {HEAD_DIM});
            d.put(p + "ffn_norm.weight", new long[] {HIDDEN});
            d.put(p + "ffn_gate_inp.weight", new long[] {HIDDEN, EXPERTS});
            d.put(p + "ffn_gate_exps.weight", new long[] {HIDDEN, EXPERT_WIDTH, EXPERTS});
            d.put(p + "ffn_up_exps.weight", new long[] {HIDDEN, EXPERT_WIDTH, EXPERTS});
            d.put(p + "ffn_down_exps.weight", new long[] {EXPERT_WIDTH, HIDDEN, EXPERTS});
        }
        return d;
    }

    private Path gguf(String name, Map<String, Consumer<GgufWriter>> keys, Map<String, long[]> dims) {
        GgufWriter writer = new GgufWriter();
        keys.values().forEach(step -> step.accept(writer));
        dims.forEach((tensor, shape) -> {
            long n = 1;
            for (long dim : shape) n *= dim;
            writer.tensor(tensor, DType.F32, shape, new byte[Math.toIntExact(4 * n)]);
        });
        return writer.write(dir.resolve(name));
    }

    // ---- the checks ------------------------------------------------------------------------------------------------

    /** Opens and binds the model as every command does. */
    private static void load(Path model) {
        try (ModelSource source = ModelSource.open(model)) {
            ModelWeights.bind(source.config(), source.tensors());
        }
    }

    /** The one-line FsException that loading {@code model} gives, which names the model and every part. */
    private static String assertFails(Path model, String... parts) {
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> load(model));
        FsException e = assertInstanceOf(FsException.class, thrown, "an FsException, not " + thrown);
        String message = e.getMessage();
        assertFalse(message.contains("\n"), "one line: " + message);
        assertTrue(message.contains(model.toString()), "names the model: " + message);
        for (String part : parts) assertTrue(message.contains(part), "'" + part + "' in: " + message);
        return message;
    }

    @Test
    void theSmallModelsThemselvesLoad() throws IOException {
        Path hf = checkpoint("valid", config(), shapes());
        try (ModelSource source = ModelSource.open(hf)) {
            ModelConfig config = source.config();
            assertEquals(new FeedForward.Experts(EXPERTS, USED, EXPERT_WIDTH, true), config.feedForward(0));
            assertEquals(new FeedForward.Dense(DENSE_WIDTH), config.feedForward(1));
            ModelWeights.bind(config, source.tensors());
        }
        try (ModelSource source = ModelSource.open(gguf("valid.gguf", keys(), dims()))) {
            assertEquals(new FeedForward.Experts(EXPERTS, USED, EXPERT_WIDTH, true), source.config().feedForward(1));
            ModelWeights.bind(source.config(), source.tensors());
        }
    }

    @Test
    void aMissingExpertTensorIsNamed() throws IOException {
        Map<String, long[]> shapes = shapes();
        shapes.remove("model.layers.0.mlp.experts.2.up_proj.weight");
        assertFails(checkpoint("missing-expert", config(), shapes), "missing model.layers.0.mlp.experts.2.up_proj.weight",
                "1 problem");
    }

    @Test
    void aMissingExpertStackIsNamed() {
        Map<String, long[]> dims = dims();
        dims.remove("blk.1.ffn_down_exps.weight");
        assertFails(gguf("missing-stack.gguf", keys(), dims), "missing blk.1.ffn_down_exps.weight", "1 problem");
    }

    @Test
    void moreExpertsPerTokenThanExpertsNamesBothKeys() throws IOException {
        ObjectNode config = config();
        config.put("num_experts_per_tok", EXPERTS + 1);
        assertFails(checkpoint("too-many-used", config, shapes()), "num_experts_per_tok", "num_experts ",
                String.valueOf(EXPERTS + 1));
        Map<String, Consumer<GgufWriter>> keys = keys();
        keys.put("qwen3moe.expert_used_count", w -> w.u32("qwen3moe.expert_used_count", EXPERTS + 1));
        assertFails(gguf("too-many-used.gguf", keys, dims()), "qwen3moe.expert_used_count", "qwen3moe.expert_count",
                String.valueOf(EXPERTS + 1));
    }

    @Test
    void anExpertStackOfTheWrongShapeIsNamedWithBothShapes() {
        Map<String, long[]> dims = dims();
        dims.put("blk.0.ffn_gate_exps.weight", new long[] {HIDDEN, EXPERT_WIDTH, EXPERTS - 1}); // one expert short
        assertFails(gguf("short-stack.gguf", keys(), dims), "blk.0.ffn_gate_exps.weight",
                "[" + (EXPERTS - 1) + ", " + EXPERT_WIDTH + ", " + HIDDEN + "]",
                "expected [" + EXPERTS + ", " + EXPERT_WIDTH + ", " + HIDDEN + "]");
        dims = dims();
        dims.put("blk.1.ffn_down_exps.weight", new long[] {HIDDEN, EXPERT_WIDTH, EXPERTS}); // gate's shape, not down's
        assertFails(gguf("transposed-stack.gguf", keys(), dims), "blk.1.ffn_down_exps.weight",
                "expected [" + EXPERTS + ", " + HIDDEN + ", " + EXPERT_WIDTH + "]");
    }

    @Test
    void aPerExpertMatrixOfTheWrongShapeIsNamed() throws IOException {
        Map<String, long[]> shapes = shapes();
        shapes.put("model.layers.0.mlp.experts.3.down_proj.weight", new long[] {HIDDEN, EXPERT_WIDTH + 1});
        assertFails(checkpoint("wide-expert", config(), shapes), "model.layers.0.mlp.experts.3.down_proj.weight",
                "expected [" + HIDDEN + ", " + EXPERT_WIDTH + "]");
    }

    @Test
    void aRouterOfTheWrongWidthIsNamed() throws IOException {
        Map<String, long[]> shapes = shapes();
        shapes.put("model.layers.0.mlp.gate.weight", new long[] {EXPERTS + 2, HIDDEN});
        assertFails(checkpoint("wide-router", config(), shapes), "model.layers.0.mlp.gate.weight",
                "expected [" + EXPERTS + ", " + HIDDEN + "]");
        Map<String, long[]> dims = dims();
        dims.put("blk.1.ffn_gate_inp.weight", new long[] {HIDDEN / 2, EXPERTS});
        assertFails(gguf("narrow-router.gguf", keys(), dims), "blk.1.ffn_gate_inp.weight",
                "expected [" + EXPERTS + ", " + HIDDEN + "]");
    }

    @Test
    void mlpOnlyLayersNamingALayerOutsideTheModelIsNamed() throws IOException {
        ObjectNode config = config();
        config.putArray("mlp_only_layers").add(1).add(LAYERS);
        assertFails(checkpoint("dense-outside", config, shapes()), "mlp_only_layers", String.valueOf(LAYERS),
                "0.." + (LAYERS - 1));
        config.putArray("mlp_only_layers").add(-1);
        assertFails(checkpoint("dense-negative", config, shapes()), "mlp_only_layers", "-1");
    }

    @Test
    void aMissingExpertKeyIsNamed() throws IOException {
        for (String key : new String[] {"qwen3moe.expert_count", "qwen3moe.expert_used_count",
                "qwen3moe.expert_feed_forward_length"}) {
            Map<String, Consumer<GgufWriter>> keys = keys();
            keys.remove(key);
            assertFails(gguf("without-" + key + ".gguf", keys, dims()), key);
        }
        ObjectNode config = config();
        config.remove("num_experts");
        assertFails(checkpoint("without-num_experts", config, shapes()), "num_experts");
    }
}
