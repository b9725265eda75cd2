package fs.model;

import fs.FsException;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Every weight of a model, bound by name (as its source names them) and checked against the config. {@code lmHead}
 * is the embedding table itself when the embeddings are tied, as in Hugging Face, even if the file stores an
 * lm_head.weight, and null for a bare Qwen3Model that has none ({@link TensorNaming#headless}). {@code rerankHead} is
 * a reranker GGUF's classifier head ({@link #RERANK_HEAD}), null for every other model. {@code notes} are what binding
 * chose that the user should hear about (see {@link WeightCheck}).
 * Matrices are [out, in] as PyTorch's Linear stores them; none is copied (an expert's matrix of a GGUF stack is a
 * slice of it).
 */
public record ModelWeights(Tensor embedTokens, List<Layer> layers, Tensor norm, Tensor lmHead, Tensor rerankHead,
                           List<String> notes) {
    /**
     * The classifier head of llama.cpp's Qwen3-Reranker GGUF (LLM_TENSOR_CLS_OUT): convert_hf_to_gguf.py keeps of the
     * lm_head (the embedding when tied) only the rows of the tokens "yes" and "no", stacked in that order as this
     * [2, hidden] tensor, and llama.cpp scores softmax(head · h)[0], h the final-normed hidden state of the last token:
     * P(yes), from the same two rows fs reads from a checkpoint's full logits.
     */
    public static final String RERANK_HEAD = "cls.output.weight";

    public ModelWeights {
        layers = List.copyOf(layers);
        notes = List.copyOf(notes);
    }

    /**
     * Binds every weight by name, checking shapes and dtypes against {@code config} before anything runs: all
     * missing, mismatched or unused tensors are reported at once, in one FsException.
     */
    public static ModelWeights bind(ModelConfig config, ModelTensors tensors) {
        WeightBinder binder = new WeightBinder(config, tensors);
        ModelWeights weights = binder.bind();
        WeightCheck check = binder.check();
        if (!check.ok()) {
            throw new FsException(tensors.source() + ": weights do not match " + tensors.names().configName() + " ("
                    + check.problemCount() + (check.problemCount() == 1 ? " problem): " : " problems): ")
                    + check.problemLine());
        }
        return weights;
    }

    /** What {@link #bind} would reject or note; ok when it would succeed. */
    public static WeightCheck check(ModelConfig config, ModelTensors tensors) {
        WeightBinder binder = new WeightBinder(config, tensors);
        binder.bind();
        return binder.check();
    }

    /** The bytes of every weight the model reads, each once (a tied output projection is the embedding). */
    public long bytes() {
        List<Tensor> all = new ArrayList<>(List.of(embedTokens));
        for (Layer layer : layers) {
            all.addAll(layer.attentionTensors());
            all.addAll(layer.feedForwardTensors());
        }
        all.addAll(outputTensors());
        return bytesOf(all);
    }

    /** The final norm and the output projection and reranker head (when there are): what runs after the layers. */
    public List<Tensor> outputTensors() {
        List<Tensor> output = new ArrayList<>(List.of(norm));
        if (lmHead != null) output.add(lmHead);
        if (rerankHead != null) output.add(rerankHead);
        return output;
    }

    /** The bytes of {@code tensors}, each once. */
    public static long bytesOf(List<Tensor> tensors) {
        Set<Tensor> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        long bytes = 0;
        for (Tensor tensor : tensors) if (seen.add(tensor)) bytes += tensor.data().byteSize();
        return bytes;
    }

    /** The weights of one decoder layer: attention, the feed-forward's norm, and the feed-forward. */
    public record Layer(Attention attention, Tensor ffnNorm, FeedForwardWeights feedForward) {
        /** The attention block's tensors. */
        public List<Tensor> attentionTensors() {
            Attention a = attention;
            return List.of(a.norm(), a.q(), a.k(), a.v(), a.o(), a.qNorm(), a.kNorm());
        }

        /** The feed-forward block's tensors, its norm first; a GGUF's expert stacks whole, not their slices. */
        public List<Tensor> feedForwardTensors() {
            List<Tensor> all = new ArrayList<>(List.of(ffnNorm));
            switch (feedForward) {
                case Dense d -> all.addAll(List.of(d.gate(), d.up(), d.down()));
                case Experts e -> {
                    all.add(e.router());
                    for (ExpertMatrices m : List.of(e.gate(), e.up(), e.down())) {
                        if (m.stack() != null) all.add(m.stack());
                        else all.addAll(m.experts());
                    }
                }
            }
            return all;
        }
    }

    /** The attention block's weights: its input norm, the projections and the per-head q and k norms. */
    public record Attention(Tensor norm, Tensor q, Tensor k, Tensor v, Tensor o, Tensor qNorm, Tensor kNorm) {}

    /** A feed-forward block's weights, of the kind {@link FeedForward} says. */
    public sealed interface FeedForwardWeights {}

    /** A dense SwiGLU's three matrices. */
    public record Dense(Tensor gate, Tensor up, Tensor down) implements FeedForwardWeights {}

    /** The router ([experts, hidden]) and the experts' three matrices. */
    public record Experts(Tensor router, ExpertMatrices gate, ExpertMatrices up, ExpertMatrices down)
            implements FeedForwardWeights {}

    /**
     * One matrix of every expert, expert e at index e: each its own tensor (a Hugging Face checkpoint; {@code stack}
     * null), or each a slice of the [experts, out, in] {@code stack} a GGUF file stores.
     */
    public record ExpertMatrices(Tensor stack, List<Tensor> experts) {
        public ExpertMatrices {
            experts = Collections.unmodifiableList(new ArrayList<>(experts)); // nulls: unusable
        }
    }
}
