package fs.model;

import fs.backend.cpu.VectorBackend;
import fs.safetensors.Checkpoint;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Looks up every weight a Qwen3 forward pass reads and checks its shape and dtype against the config, collecting
 * every problem instead of stopping at the first, so one run tells the user everything that is wrong. A tensor that
 * no part of the model reads is a problem too: it means the config and the checkpoint describe different models.
 */
final class Qwen3WeightBinder {
    private static final String LM_HEAD = "lm_head.weight";
    private static final String EMBED_TOKENS = "model.embed_tokens.weight";
    private static final Pattern LAYER_TENSOR = Pattern.compile("model\\.layers\\.(0|[1-9][0-9]*)\\..*");
    private static final int MAX_NAMED_UNREAD = 10;

    private final Qwen3Config config;
    private final Checkpoint checkpoint;
    private final List<String> problems = new ArrayList<>();
    private int problemCount;
    private final List<String> notes = new ArrayList<>();
    private final Set<String> read = new HashSet<>();

    Qwen3WeightBinder(Qwen3Config config, Checkpoint checkpoint) {
        this.config = config;
        this.checkpoint = checkpoint;
    }

    /** The weights, complete only when {@link #check()} is ok afterwards. */
    Qwen3Weights bind() {
        long hidden = config.hiddenSize();
        long vocab = config.vocabSize();
        Tensor embedTokens = expect(EMBED_TOKENS, vocab, hidden);
        List<Qwen3Weights.Layer> layers = new ArrayList<>();
        int layerCount = layersToBind();
        for (int i = 0; i < layerCount; i++) layers.add(layer("model.layers." + i + "."));
        Tensor norm = expect("model.norm.weight", hidden);
        Tensor lmHead = config.tieWordEmbeddings() ? tiedHead(embedTokens) : expect(LM_HEAD, vocab, hidden);
        reportUnread();
        return new Qwen3Weights(embedTokens, layers, norm, lmHead, notes);
    }

    WeightCheck check() {
        return new WeightCheck(problems, problemCount, notes);
    }

    /**
     * How many layers to look up: num_hidden_layers is first compared with the layers the checkpoint stores, so that
     * a config claiming 10^9 layers costs one problem rather than 10^9 lookups and as many "missing" lines.
     */
    private int layersToBind() {
        Set<String> stored = new HashSet<>();
        for (Tensor tensor : checkpoint.tensors()) {
            Matcher layer = LAYER_TENSOR.matcher(tensor.name());
            if (layer.matches()) stored.add(layer.group(1));
        }
        int configured = config.numHiddenLayers();
        if (stored.size() != configured) {
            problem("num_hidden_layers is " + configured + " but the checkpoint stores " + stored.size()
                    + (stored.size() == 1 ? " layer" : " layers"));
        }
        return Math.min(configured, stored.size());
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

    /**
     * Tied embeddings make the output projection the embedding table, whatever the file stores as lm_head.weight:
     * Hugging Face ties the two after loading, so a stored head is never used there either.
     */
    private Tensor tiedHead(Tensor embedTokens) {
        Optional<Tensor> stored = checkpoint.find(LM_HEAD);
        if (stored.isPresent()) {
            read.add(LM_HEAD);
            if (embedTokens != null && !sameContents(stored.get(), embedTokens)) {
                notes.add("the stored " + LM_HEAD + " differs from " + EMBED_TOKENS + " and is not used:"
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
        for (Tensor tensor : checkpoint.tensors()) {
            if (read.contains(tensor.name())) continue;
            unread.add(tensor.name().isEmpty() ? "'' (an empty name)" : "'" + tensor.name() + "'");
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
        Optional<Tensor> found = checkpoint.find(name);
        if (found.isEmpty()) {
            boolean untiedHead = name.equals(LM_HEAD);
            problem("missing " + name + (untiedHead ? " (tie_word_embeddings is false)" : ""));
            return null;
        }
        Tensor tensor = found.get();
        boolean usable = true;
        if (!Arrays.equals(tensor.shape(), shape)) {
            problem(name + " has shape " + Arrays.toString(tensor.shape()) + ", expected " + Arrays.toString(shape));
            usable = false;
        }
        if (!VectorBackend.reads(tensor.dtype())) {
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
