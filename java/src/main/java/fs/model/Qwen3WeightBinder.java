package fs.model;

import fs.safetensors.Checkpoint;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Looks up every weight a Qwen3 forward pass reads and checks its shape and dtype against the config, collecting
 * every problem instead of stopping at the first, so one run tells the user everything that is wrong.
 */
final class Qwen3WeightBinder {
    private final Qwen3Config config;
    private final Checkpoint checkpoint;
    private final List<String> problems = new ArrayList<>();

    Qwen3WeightBinder(Qwen3Config config, Checkpoint checkpoint) {
        this.config = config;
        this.checkpoint = checkpoint;
    }

    /** The weights, complete only when {@link #problems()} is empty afterwards. */
    Qwen3Weights bind() {
        long hidden = config.hiddenSize();
        long vocab = config.vocabSize();
        Tensor embedTokens = expect("model.embed_tokens.weight", vocab, hidden);
        List<Qwen3Weights.Layer> layers = new ArrayList<>();
        for (int i = 0; i < config.numHiddenLayers(); i++) layers.add(layer("model.layers." + i + "."));
        Tensor norm = expect("model.norm.weight", hidden);
        Tensor lmHead;
        if (checkpoint.find("lm_head.weight").isPresent() || !config.tieWordEmbeddings()) {
            lmHead = expect("lm_head.weight", vocab, hidden);
        } else {
            lmHead = embedTokens;
        }
        return new Qwen3Weights(embedTokens, layers, norm, lmHead);
    }

    List<String> problems() {
        return List.copyOf(problems);
    }

    private Qwen3Weights.Layer layer(String prefix) {
        long hidden = config.hiddenSize();
        long queryDim = config.queryDim();
        long kvDim = config.kvDim();
        long intermediate = config.intermediateSize();
        long headDim = config.headDim();
        return new Qwen3Weights.Layer(
                expect(prefix + "input_layernorm.weight", hidden),
                expect(prefix + "self_attn.q_proj.weight", queryDim, hidden),
                expect(prefix + "self_attn.k_proj.weight", kvDim, hidden),
                expect(prefix + "self_attn.v_proj.weight", kvDim, hidden),
                expect(prefix + "self_attn.o_proj.weight", hidden, queryDim),
                expect(prefix + "self_attn.q_norm.weight", headDim),
                expect(prefix + "self_attn.k_norm.weight", headDim),
                expect(prefix + "post_attention_layernorm.weight", hidden),
                expect(prefix + "mlp.gate_proj.weight", intermediate, hidden),
                expect(prefix + "mlp.up_proj.weight", intermediate, hidden),
                expect(prefix + "mlp.down_proj.weight", hidden, intermediate));
    }

    /** The tensor, or null after recording why it cannot be used. */
    private Tensor expect(String name, long... shape) {
        Optional<Tensor> found = checkpoint.find(name);
        if (found.isEmpty()) {
            boolean untiedHead = name.equals("lm_head.weight");
            problems.add("missing " + name + (untiedHead ? " (tie_word_embeddings is false)" : ""));
            return null;
        }
        Tensor tensor = found.get();
        boolean usable = true;
        if (!Arrays.equals(tensor.shape(), shape)) {
            problems.add(name + " has shape " + Arrays.toString(tensor.shape()) + ", expected " + Arrays.toString(shape));
            usable = false;
        }
        if (!tensor.dtype().isComputeType()) {
            problems.add(name + " has dtype " + tensor.dtype() + ", expected F32, F16 or BF16");
            usable = false;
        }
        return usable ? tensor : null;
    }
}
