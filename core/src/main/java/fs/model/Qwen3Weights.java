package fs.model;

import fs.FsException;
import fs.tensor.Tensor;
import java.util.List;

/**
 * Every weight of a Qwen3 model, bound by name (as its source names them) and checked against the config. {@code lmHead} is the
 * embedding table itself when the embeddings are tied, as in Hugging Face, even if the file stores an
 * lm_head.weight. {@code notes} are what binding chose that the user should hear about (see {@link WeightCheck}).
 */
public record Qwen3Weights(Tensor embedTokens, List<Layer> layers, Tensor norm, Tensor lmHead, List<String> notes) {

    public Qwen3Weights {
        layers = List.copyOf(layers);
        notes = List.copyOf(notes);
    }

    /**
     * Binds every weight by name, checking shapes and dtypes against {@code config} before anything runs: all
     * missing, mismatched or unused tensors are reported at once, in one FsException.
     */
    public static Qwen3Weights bind(Qwen3Config config, ModelTensors tensors) {
        Qwen3WeightBinder binder = new Qwen3WeightBinder(config, tensors);
        Qwen3Weights weights = binder.bind();
        WeightCheck check = binder.check();
        if (!check.ok()) {
            throw new FsException(tensors.source() + ": weights do not match " + tensors.names().configName() + " ("
                    + check.problemCount() + (check.problemCount() == 1 ? " problem): " : " problems): ")
                    + check.problemLine());
        }
        return weights;
    }

    /** What {@link #bind} would reject or note; ok when it would succeed. */
    public static WeightCheck check(Qwen3Config config, ModelTensors tensors) {
        Qwen3WeightBinder binder = new Qwen3WeightBinder(config, tensors);
        binder.bind();
        return binder.check();
    }

    /** The weights of layer N; projections are [out, in] as PyTorch's Linear stores them. */
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
