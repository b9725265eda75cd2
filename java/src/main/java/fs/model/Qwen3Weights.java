package fs.model;

import fs.FsException;
import fs.safetensors.Checkpoint;
import fs.tensor.Tensor;
import java.util.List;

/**
 * Every weight of a Qwen3 checkpoint, bound by name and checked against the config. {@code lmHead} is the
 * embedding table itself when the embeddings are tied and the checkpoint has no separate lm_head.weight.
 */
public record Qwen3Weights(Tensor embedTokens, List<Layer> layers, Tensor norm, Tensor lmHead) {

    public Qwen3Weights {
        layers = List.copyOf(layers);
    }

    /**
     * Binds every weight by name, checking shapes and dtypes against {@code config} before anything runs: all
     * missing or mismatched tensors are reported at once, in one FsException. Extra tensors are ignored.
     */
    public static Qwen3Weights bind(Qwen3Config config, Checkpoint checkpoint) {
        Qwen3WeightBinder binder = new Qwen3WeightBinder(config, checkpoint);
        Qwen3Weights weights = binder.bind();
        List<String> problems = binder.problems();
        if (!problems.isEmpty()) {
            throw new FsException(checkpoint.directory() + ": weights do not match config.json (" + problems.size()
                    + (problems.size() == 1 ? " problem): " : " problems): ") + String.join("; ", problems));
        }
        return weights;
    }

    /** What {@link #bind} would reject, one entry per missing or mismatched tensor; empty when it would succeed. */
    public static List<String> problems(Qwen3Config config, Checkpoint checkpoint) {
        Qwen3WeightBinder binder = new Qwen3WeightBinder(config, checkpoint);
        binder.bind();
        return binder.problems();
    }

    /** The weights of model.layers.N; projections are [out, in] as PyTorch's Linear stores them. */
    public record Layer(
            Tensor inputLayernorm,
            Tensor qProj,
            Tensor kProj,
            Tensor vProj,
            Tensor oProj,
            Tensor qNorm,
            Tensor kNorm,
            Tensor postAttentionLayernorm,
            Tensor gateProj,
            Tensor upProj,
            Tensor downProj) {}
}
