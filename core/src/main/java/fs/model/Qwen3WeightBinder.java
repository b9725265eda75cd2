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
 * Looks up every weight a Qwen3 forward pass reads, by the names its source uses, and checks its shape and dtype
 * against the config, collecting every problem instead of stopping at the first, so one run tells the user everything
 * that is wrong. A tensor that no part of the model reads is a problem too: it means the config and the stored tensors
 * describe different models.
 */
final class Qwen3WeightBinder {
    private static final int MAX_NAMED_UNREAD = 10;

    private final Qwen3Config config;
    private final ModelTensors stored;
    private final Qwen3TensorNames names;
    private final List<String> problems = new ArrayList<>();
    private int problemCount;
    private final List<String> notes = new ArrayList<>();
    private final Set<String> read = new HashSet<>();

    Qwen3WeightBinder(Qwen3Config config, ModelTensors stored) {
        this.config = config;
        this.stored = stored;
        this.names = stored.names();
    }

    /** The weights, complete only when {@link #check()} is ok afterwards. */
    Qwen3Weights bind() {
        long hidden = config.hiddenSize();
        long vocab = config.vocabSize();
        Tensor embedTokens = expect(names.embedding(), vocab, hidden);
        List<Qwen3Weights.Layer> layers = new ArrayList<>();
        int layerCount = layersToBind();
        for (int i = 0; i < layerCount; i++) layers.add(layer(names.layer(i)));
        Tensor norm = expect(names.norm(), hidden);
        Tensor lmHead = config.tieWordEmbeddings() ? tiedHead(embedTokens) : expect(names.output(), vocab, hidden);
        reportUnread();
        return new Qwen3Weights(embedTokens, layers, norm, lmHead, notes);
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
            problem(names.layerCountKey() + " is " + configured + " but the " + names.storage() + " stores "
                    + layersStored.size() + (layersStored.size() == 1 ? " layer" : " layers"));
        }
        return Math.min(configured, layersStored.size());
    }

    private Qwen3Weights.Layer layer(List<String> tensor) {
        long hidden = config.hiddenSize();
        long queryDim = config.queryDim();
        long kvDim = config.kvDim();
        long intermediate = config.intermediateSize();
        long headDim = config.headDim();
        return new Qwen3Weights.Layer(
                expect(tensor.get(0), hidden),
                expect(tensor.get(1), queryDim, hidden),
                expect(tensor.get(2), kvDim, hidden),
                expect(tensor.get(3), kvDim, hidden),
                expect(tensor.get(4), hidden, queryDim),
                expect(tensor.get(5), headDim),
                expect(tensor.get(6), headDim),
                expect(tensor.get(7), hidden),
                expect(tensor.get(8), intermediate, hidden),
                expect(tensor.get(9), intermediate, hidden),
                expect(tensor.get(10), hidden, intermediate));
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
            boolean untiedHead = name.equals(names.output()) && names == Qwen3TensorNames.HUGGING_FACE;
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
