package fs.model;

import java.util.List;
import java.util.Set;

/**
 * Qwen3-MoE (Qwen3MoeForCausalLM, GGUF qwen3moe; Qwen3-30B-A3B, Qwen3-Coder-30B-A3B): Qwen3's attention, and
 * feed-forwards that are mixtures of {@code num_experts} SwiGLU experts of {@code moe_intermediate_size}, the
 * {@code num_experts_per_tok} most probable run per token. As in Hugging Face, layer l is sparse unless it is in
 * {@code mlp_only_layers} or (l + 1) is not a multiple of {@code decoder_sparse_step}; such layers are dense
 * SwiGLUs of {@code intermediate_size}. A GGUF has only sparse layers (llama.cpp's qwen3moe has no dense ones) and
 * always renormalizes the chosen experts' weights, as llama.cpp does.
 */
public record Qwen3Moe() implements Architecture {

    @Override
    public String displayName() {
        return "Qwen3-MoE";
    }

    @Override
    public String modelType() {
        return "qwen3_moe";
    }

    @Override
    public String huggingFaceClass() {
        return "Qwen3MoeForCausalLM";
    }

    @Override
    public String ggufName() {
        return "qwen3moe";
    }

    @Override
    public List<FeedForward> feedForward(HuggingFaceConfigReader config, int layers) {
        int count = config.positiveInt("num_experts");
        int used = config.positiveInt("num_experts_per_tok");
        int width = config.positiveInt("moe_intermediate_size");
        // Hugging Face's Qwen3MoeConfig defaults norm_topk_prob to false; Qwen3-30B-A3B sets it true.
        boolean normalize = config.bool("norm_topk_prob", false);
        int step = config.has("decoder_sparse_step") ? config.positiveInt("decoder_sparse_step") : 1;
        Set<Integer> dense = config.layerSet("mlp_only_layers", layers);
        FeedForward.Experts experts = config.checked(
                () -> experts(count, "num_experts", used, "num_experts_per_tok", width, normalize));
        boolean anyDense = !dense.isEmpty() || step > 1;
        FeedForward.Dense mlp = anyDense ? new FeedForward.Dense(config.positiveInt("intermediate_size")) : null;
        return new LayerList<>(layers, l -> !dense.contains(l) && (l + 1) % step == 0 ? experts : mlp);
    }

    @Override
    public List<FeedForward> feedForward(GgufConfigReader metadata, int layers) {
        int count = metadata.positive("expert_count");
        int used = metadata.positive("expert_used_count");
        int width = metadata.positive("expert_feed_forward_length");
        String prefix = ggufName() + ".";
        FeedForward.Experts experts = metadata.checked(() -> experts(count, prefix + "expert_count", used,
                prefix + "expert_used_count", width, true));
        return new LayerList<>(layers, l -> experts);
    }

    /** The experts, with more used per token than there are named by the two keys that say so. */
    private static FeedForward.Experts experts(int count, String countKey, int used, String usedKey, int width,
            boolean normalize) {
        if (used > count) {
            throw new IllegalArgumentException(usedKey + " (" + used + ") is more than " + countKey + " (" + count
                    + "): a token cannot run more experts than the layer has");
        }
        return new FeedForward.Experts(count, used, width, normalize);
    }
}
