package fs.model;

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
