package fs.model;

import java.util.List;

/** Qwen3 (Qwen3ForCausalLM, GGUF qwen3): every layer's feed-forward a dense SwiGLU of intermediate_size. */
public record Qwen3() implements Architecture {

    @Override
    public String displayName() {
        return "Qwen3";
    }

    @Override
    public String modelType() {
        return "qwen3";
    }

    @Override
    public String huggingFaceClass() {
        return "Qwen3ForCausalLM";
    }

    @Override
    public String ggufName() {
        return "qwen3";
    }

    @Override
    public List<FeedForward> feedForward(HuggingFaceConfigReader config, int layers) {
        FeedForward.Dense dense = new FeedForward.Dense(config.positiveInt("intermediate_size"));
        return new LayerList<>(layers, l -> dense);
    }

    @Override
    public List<FeedForward> feedForward(GgufConfigReader metadata, int layers) {
        FeedForward.Dense dense = new FeedForward.Dense(metadata.positive("feed_forward_length"));
        return new LayerList<>(layers, l -> dense);
    }
}
