package fs.model;

import fs.Quoted;
import fs.format.ReferenceDequantizer;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Looks up every weight a model's forward pass reads, by role ({@link TensorRole}) for each layer's feed-forward kind, by the names its source uses, and checks its shape and dtype
 * against the config, collecting every problem instead of stopping at the first, so one run tells the user everything
 * that is wrong. A tensor that no part of the model reads is a problem too: it means the config and the stored tensors
 * describe different models.
 */
final class WeightBinder {
    private static final int MAX_NAMED_UNREAD = 10;

    private final ModelConfig config;
    private final ModelTensors stored;
    private final TensorNaming names;
    private final List<String> problems = new ArrayList<>();
    private int problemCount;
    private final List<String> notes = new ArrayList<>();
    private final Set<String> read = new HashSet<>();

    WeightBinder(ModelConfig config, ModelTensors stored) {
        this.config = config;
        this.stored = stored;
        this.names = stored.names();
    }

    /** The weights, complete only when {@link #check()} is ok afterwards. */
    ModelWeights bind() {
        long hidden = config.hiddenSize();
        long vocab = config.vocabSize();
        Tensor embedTokens = expect(names.embedding(), vocab, hidden);
        List<ModelWeights.Layer> layers = new ArrayList<>();
        int layerCount = layersToBind();
        for (int i = 0; i < layerCount; i++) layers.add(layer(i));
        Tensor norm = expect(names.norm(), hidden);
        Tensor lmHead = config.tieWordEmbeddings() ? tiedHead(embedTokens)
                : names.headless() ? null // a bare Qwen3Model computes hidden states only (embeddings)
                : expect(names.output(), vocab, hidden);
        // only a GGUF file has one: a checkpoint's reranker scores with its lm_head
        Tensor rerankHead = names == TensorNaming.GGUF && stored.find(ModelWeights.RERANK_HEAD).isPresent()
                ? expect(ModelWeights.RERANK_HEAD, 2, hidden) : null;
        reportUnread();
        return new ModelWeights(embedTokens, layers, norm, lmHead, rerankHead, notes);
    }

    WeightCheck check() {
        return new WeightCheck(problems, problemCount, notes);
    }

    /**
     * How many layers to look up: the config's layer count is first compared with the layers actually stored, so that
     * a config claiming 10^9 layers costs one problem rather than 10^9 lookups and as many "missing" lines.
     */
    private int layersToBind() {
        Set<String> layersStored = new HashSet<>();
        for (String name : stored.storedNames()) {
            String layer = names.layerOf(name);
            if (layer != null) layersStored.add(layer);
        }
        int configured = config.numHiddenLayers();
        if (layersStored.size() != configured) {
            problem(names.layerCountKey(config.architecture()) + " is " + configured + " but the " + names.storage() + " stores "
                    + layersStored.size() + (layersStored.size() == 1 ? " layer" : " layers"));
        }
        return Math.min(configured, layersStored.size());
    }

    private ModelWeights.Layer layer(int l) {
        long hidden = config.hiddenSize();
        long queryDim = config.queryDim();
        long kvDim = config.kvDim();
        long headDim = config.headDim();
        ModelWeights.Attention attention = new ModelWeights.Attention(
                expect(l, TensorRole.ATTN_NORM, hidden),
                expect(l, TensorRole.Q, queryDim, hidden),
                expect(l, TensorRole.K, kvDim, hidden),
                expect(l, TensorRole.V, kvDim, hidden),
                expect(l, TensorRole.O, hidden, queryDim),
                expect(l, TensorRole.Q_NORM, headDim),
                expect(l, TensorRole.K_NORM, headDim));
        Tensor ffnNorm = expect(l, TensorRole.FFN_NORM, hidden);
        ModelWeights.FeedForwardWeights feedForward = switch (config.feedForward(l)) {
            case FeedForward.Dense dense -> new ModelWeights.Dense(
                    expect(l, TensorRole.GATE, dense.width(), hidden),
                    expect(l, TensorRole.UP, dense.width(), hidden),
                    expect(l, TensorRole.DOWN, hidden, dense.width()));
            case FeedForward.Experts experts -> new ModelWeights.Experts(
                    expect(l, TensorRole.ROUTER, experts.count(), hidden),
                    experts(l, TensorRole.EXPERT_GATE, experts.count(), experts.width(), hidden),
                    experts(l, TensorRole.EXPERT_UP, experts.count(), experts.width(), hidden),
                    experts(l, TensorRole.EXPERT_DOWN, experts.count(), hidden, experts.width()));
        };
        return new ModelWeights.Layer(attention, ffnNorm, feedForward);
    }

    private Tensor expect(int layer, TensorRole role, long... shape) {
        return expect(names.layer(layer, role), shape);
    }

    /**
     * Each expert's [rows, columns] matrix of {@code role}: its own tensor in a checkpoint, a slice of the layer's
     * [count, rows, columns] stack in a GGUF file (in place, no copy). Null entries are experts that cannot be used.
     */
    private ModelWeights.ExpertMatrices experts(int layer, TensorRole role, int count, long rows, long columns) {
        List<Tensor> matrices = new ArrayList<>();
        if (!names.stacksExperts()) {
            for (int e = 0; e < count; e++) matrices.add(expect(names.expert(layer, role, e), rows, columns));
            return new ModelWeights.ExpertMatrices(null, matrices);
        }
        String name = names.layer(layer, role);
        Tensor stack = expect(name, count, rows, columns);
        for (int e = 0; e < count; e++) {
            if (stack == null) {
                matrices.add(null);
                continue;
            }
            long bytes = stack.byteSize() / count;
            matrices.add(new Tensor(name + "[" + e + "]", stack.dtype(), new long[] {rows, columns},
                    stack.data().asSlice(e * bytes, bytes)));
        }
        return new ModelWeights.ExpertMatrices(stack, matrices);
    }

    /**
     * Tied embeddings make the output projection the embedding table, whatever the source stores as the output:
     * Hugging Face ties the two after loading, so a stored head is never used there either.
     */
    private Tensor tiedHead(Tensor embedTokens) {
        String output = names.output();
        Optional<Tensor> head = stored.find(output);
        if (head.isPresent()) {
            read.add(output);
            if (embedTokens != null && !sameContents(head.get(), embedTokens)) {
                notes.add("the stored " + output + " differs from " + names.embedding() + " and is not used:"
                        + " tie_word_embeddings is true, so the embedding is the output projection, as in Hugging Face");
            }
        }
        return embedTokens;
    }

    private static boolean sameContents(Tensor a, Tensor b) {
        return a.dtype() == b.dtype() && Arrays.equals(a.shape(), b.shape()) && a.data().mismatch(b.data()) == -1;
    }

    /** Every stored tensor the forward pass does not read, named (the first few) in one problem. */
    private void reportUnread() {
        List<String> unread = new ArrayList<>();
        for (String name : stored.storedNames()) {
            if (read.contains(name)) continue;
            unread.add(Quoted.quote(name) + (name.isEmpty() ? " (an empty name)" : ""));
        }
        if (unread.isEmpty()) return;
        String named = String.join(", ", unread.subList(0, Math.min(unread.size(), MAX_NAMED_UNREAD)));
        int more = unread.size() - MAX_NAMED_UNREAD;
        problem((unread.size() == 1 ? "1 stored tensor is" : unread.size() + " stored tensors are")
                + " not part of this model: " + named + (more > 0 ? " and " + more + " more" : ""));
    }

    /** The tensor, or null after recording why it cannot be used. */
    private Tensor expect(String name, long... shape) {
        read.add(name);
        Optional<Tensor> found = stored.find(name);
        if (found.isEmpty()) {
            boolean untiedHead = name.equals(names.output()) && names == TensorNaming.HUGGING_FACE;
            problem("missing " + name + (untiedHead ? " (tie_word_embeddings is false)" : ""));
            return null;
        }
        Tensor tensor = found.get();
        boolean usable = true;
        if (!Arrays.equals(tensor.shape(), shape)) {
            problem(name + " has shape " + Arrays.toString(tensor.shape()) + ", expected " + Arrays.toString(shape));
            usable = false;
        }
        if (!ReferenceDequantizer.decodes(tensor.dtype())) {
            problem(name + " is stored as " + tensor.dtype() + ", which fs does not read as a weight");
            usable = false;
        }
        return usable ? tensor : null;
    }

    private void problem(String problem) {
        problemCount++;
        if (problems.size() < WeightCheck.MAX_LISTED) problems.add(problem);
    }
}
