package fs.model;

import java.util.List;
import java.util.regex.Pattern;

/**
 * How a model source names the tensors of a Qwen3 model: Hugging Face's module paths (model.layers.N.self_attn.q_proj
 * .weight) or llama.cpp's GGUF names (blk.N.attn_q.weight). Both store every matrix as [out, in], and Qwen3's GGUF
 * conversion leaves q and k unpermuted (its NEOX rope is Hugging Face's rotate-half), so only the names differ.
 */
public enum Qwen3TensorNames {
    HUGGING_FACE("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight", "model.layers.",
            List.of("input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                    "self_attn.v_proj.weight", "self_attn.o_proj.weight", "self_attn.q_norm.weight",
                    "self_attn.k_norm.weight", "post_attention_layernorm.weight", "mlp.gate_proj.weight",
                    "mlp.up_proj.weight", "mlp.down_proj.weight"),
            "config.json", "num_hidden_layers", "checkpoint"),
    GGUF("token_embd.weight", "output_norm.weight", "output.weight", "blk.",
            List.of("attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
                    "attn_q_norm.weight", "attn_k_norm.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight",
                    "ffn_down.weight"),
            "the file's metadata", "qwen3.block_count", "file");

    private final String embedding;
    private final String norm;
    private final String output;
    private final String layerPrefix;
    /** In the order of {@link Qwen3Weights.Layer}'s components. */
    private final List<String> layerTensors;
    private final String configName;
    private final String layerCountKey;
    private final String storage;
    private final Pattern layerTensor;

    Qwen3TensorNames(String embedding, String norm, String output, String layerPrefix, List<String> layerTensors,
            String configName, String layerCountKey, String storage) {
        this.embedding = embedding;
        this.norm = norm;
        this.output = output;
        this.layerPrefix = layerPrefix;
        this.layerTensors = layerTensors;
        this.configName = configName;
        this.layerCountKey = layerCountKey;
        this.storage = storage;
        this.layerTensor = Pattern.compile(Pattern.quote(layerPrefix) + "(0|[1-9][0-9]*)\\..*");
    }

    public String embedding() {
        return embedding;
    }

    /** The final norm, before the output projection. */
    public String norm() {
        return norm;
    }

    /** The output projection; absent when the embeddings are tied. */
    public String output() {
        return output;
    }

    /** The names of layer {@code layer}'s tensors, in the order of {@link Qwen3Weights.Layer}'s components. */
    public List<String> layer(int layer) {
        return layerTensors.stream().map(tensor -> layerPrefix + layer + "." + tensor).toList();
    }

    /** What the config was read from, for messages: "config.json", "the file's metadata". */
    String configName() {
        return configName;
    }

    /** The config field that counts the layers. */
    String layerCountKey() {
        return layerCountKey;
    }

    /** What holds the tensors, for messages: "checkpoint", "file". */
    String storage() {
        return storage;
    }

    /** The layer a tensor name belongs to (its digits, as stored), or null for a tensor outside the layers. */
    String layerOf(String tensorName) {
        var matcher = layerTensor.matcher(tensorName);
        return matcher.matches() ? matcher.group(1) : null;
    }
}
