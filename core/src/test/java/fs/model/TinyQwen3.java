package fs.model;

import fs.safetensors.SafetensorsWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A Qwen3-shaped model small enough to write in a test: 2 layers, hidden 16, 4 query heads and 2 kv heads of 8
 * (so the query width, 32, differs from hidden as in real Qwen3), intermediate 24, vocab 40. Every tensor is BF16
 * and filled with one value, its position in {@link #shapes} plus one, so tests can tell tensors apart.
 */
public final class TinyQwen3 {
    public static final int HIDDEN = 16, LAYERS = 2, HEADS = 4, KV_HEADS = 2, HEAD_DIM = 8, INTERMEDIATE = 24, VOCAB = 40;

    private TinyQwen3() {}

    public static String configJson(boolean tied) {
        return """
                {
                  "architectures": ["Qwen3ForCausalLM"],
                  "model_type": "qwen3",
                  "hidden_size": %d,
                  "num_hidden_layers": %d,
                  "num_attention_heads": %d,
                  "num_key_value_heads": %d,
                  "head_dim": %d,
                  "intermediate_size": %d,
                  "vocab_size": %d,
                  "rms_norm_eps": 1e-06,
                  "rope_theta": 1000000,
                  "rope_scaling": null,
                  "max_position_embeddings": 512,
                  "tie_word_embeddings": %b,
                  "bos_token_id": 1,
                  "eos_token_id": [2, 3],
                  "torch_dtype": "bfloat16",
                  "hidden_act": "silu"
                }
                """.formatted(HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, INTERMEDIATE, VOCAB, tied);
    }

    /** Every tensor the model reads, lm_head.weight included, in the order Hugging Face writes them (sorted). */
    public static Map<String, long[]> shapes() {
        Map<String, long[]> shapes = new LinkedHashMap<>();
        shapes.put("lm_head.weight", new long[] {VOCAB, HIDDEN});
        shapes.put("model.embed_tokens.weight", new long[] {VOCAB, HIDDEN});
        for (int i = 0; i < LAYERS; i++) {
            String p = "model.layers." + i + ".";
            shapes.put(p + "input_layernorm.weight", new long[] {HIDDEN});
            shapes.put(p + "mlp.down_proj.weight", new long[] {HIDDEN, INTERMEDIATE});
            shapes.put(p + "mlp.gate_proj.weight", new long[] {INTERMEDIATE, HIDDEN});
            shapes.put(p + "mlp.up_proj.weight", new long[] {INTERMEDIATE, HIDDEN});
            shapes.put(p + "post_attention_layernorm.weight", new long[] {HIDDEN});
            shapes.put(p + "self_attn.k_norm.weight", new long[] {HEAD_DIM});
            shapes.put(p + "self_attn.k_proj.weight", new long[] {KV_HEADS * HEAD_DIM, HIDDEN});
            shapes.put(p + "self_attn.o_proj.weight", new long[] {HIDDEN, HEADS * HEAD_DIM});
            shapes.put(p + "self_attn.q_norm.weight", new long[] {HEAD_DIM});
            shapes.put(p + "self_attn.q_proj.weight", new long[] {HEADS * HEAD_DIM, HIDDEN});
            shapes.put(p + "self_attn.v_proj.weight", new long[] {KV_HEADS * HEAD_DIM, HIDDEN});
        }
        shapes.put("model.norm.weight", new long[] {HIDDEN});
        return shapes;
    }

    /** A model directory: config.json and a model.safetensors holding {@code shapes}. */
    public static Path write(Path dir, boolean tied, Map<String, long[]> shapes) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("config.json"), configJson(tied));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        SafetensorsWriter writer = new SafetensorsWriter().metadata("format", "pt");
        int ordinal = 0;
        for (var entry : shapes.entrySet()) {
            float[] values = new float[Math.toIntExact(Arrays.stream(entry.getValue()).reduce(1, Math::multiplyExact))];
            Arrays.fill(values, ++ordinal);
            writer.bf16(entry.getKey(), entry.getValue(), values);
        }
        writer.write(dir.resolve("model.safetensors"));
        return dir;
    }

    /** The usual layout of a tied checkpoint: no lm_head.weight. */
    public static Path writeTied(Path dir) {
        Map<String, long[]> shapes = shapes();
        shapes.remove("lm_head.weight");
        return write(dir, true, shapes);
    }
}
