package fs.model;

import fs.backend.Rope;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The hyperparameters of a model, as its {@link Architecture} read them from config.json or GGUF metadata: what
 * everything above the model layer (engine, scheduler, commands) sizes itself by. {@code headDim} is hidden / heads
 * when config.json has none; {@code feedForward} says per layer whether its feed-forward is dense or a mixture of
 * experts; {@code eosTokenIds} holds every id that ends generation (config.json's eos_token_id, one id or a list);
 * {@code ropeScaling} is rope_scaling (or rope_parameters): plain RoPE or YaRN.
 */
public record ModelConfig(
        Architecture architecture,
        int hiddenSize,
        int numHiddenLayers,
        int numAttentionHeads,
        int numKeyValueHeads,
        int headDim,
        List<FeedForward> feedForward,
        int vocabSize,
        float rmsNormEps,
        float ropeTheta,
        RopeScaling ropeScaling,
        int maxPositionEmbeddings,
        boolean tieWordEmbeddings,
        int bosTokenId,
        List<Integer> eosTokenIds,
        String torchDtype) {

    /**
     * Checks what no one field shows, the same for every file format the config is read from: a shape the engine
     * cannot run, or a token id outside the embedding table (read from outside it; a stop id there could never be
     * generated). Each is an IllegalArgumentException whose message the readers give as the file's one line.
     */
    public ModelConfig {
        Objects.requireNonNull(architecture, "architecture");
        Objects.requireNonNull(ropeScaling, "ropeScaling");
        eosTokenIds = List.copyOf(eosTokenIds);
        feedForward = feedForward instanceof LayerList<FeedForward> ? feedForward : List.copyOf(feedForward);
        if (feedForward.size() != numHiddenLayers) {
            throw new IllegalArgumentException(numHiddenLayers + " layers but " + feedForward.size()
                    + " feed-forward blocks");
        }
        if (numKeyValueHeads <= 0 || numAttentionHeads % numKeyValueHeads != 0) {
            throw new IllegalArgumentException("the attention heads (" + numAttentionHeads + ") are not a multiple of"
                    + " the key-value heads (" + numKeyValueHeads + ")");
        }
        // Hugging Face's rotate-half RoPE pairs the two halves of a head; an odd head dimension has no such halves.
        if (headDim % 2 != 0) {
            throw new IllegalArgumentException("the head dimension (" + headDim + ") is odd; RoPE rotates pairs of"
                    + " dimensions");
        }
        if ((long) numAttentionHeads * headDim > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the attention heads (" + numAttentionHeads + ") times the head dimension"
                    + " (" + headDim + ") is too large (the query width must fit in 2^31 - 1)");
        }
        checkTokenId("bos", bosTokenId, vocabSize);
        for (int id : eosTokenIds) checkTokenId("eos", id, vocabSize);
    }

    private static void checkTokenId(String which, int id, int vocabSize) {
        if (id < 0 || id >= vocabSize) {
            throw new IllegalArgumentException("the " + which + " token id " + id + " is outside the vocabulary (0.."
                    + (vocabSize - 1) + ")");
        }
    }

    /**
     * Reads a Hugging Face config.json. A missing or malformed field, or a model of no architecture fs runs, is one
     * FsException naming the file and the field.
     */
    public static ModelConfig read(Path configJson) {
        return HuggingFaceConfigReader.read(configJson);
    }

    /** Layer {@code layer}'s feed-forward block. */
    public FeedForward feedForward(int layer) {
        return feedForward.get(layer);
    }

    /** The widest activation between a feed-forward's up and down projections, over every layer. */
    public int largestFeedForwardWidth() {
        return kinds().stream().mapToInt(FeedForward::width).max().orElse(1);
    }

    /** The widest router (most experts) over the layers; 0 for a model without experts. */
    public int largestExpertCount() {
        return kinds().stream().mapToInt(f -> f instanceof FeedForward.Experts e ? e.count() : 0).max().orElse(0);
    }

    /** The most experts a token runs in one layer; 0 for a model without experts. */
    public int mostExpertsUsed() {
        return kinds().stream().mapToInt(f -> f instanceof FeedForward.Experts e ? e.used() : 0).max().orElse(0);
    }

    /** The distinct feed-forward blocks of the layers (a model has one or two kinds, however many layers). */
    public Set<FeedForward> kinds() {
        Set<FeedForward> kinds = new LinkedHashSet<>();
        // Architectures repeat one or two blocks; a config's layer count may be absurd (the weights refuse it later).
        for (int l = 0; l < Math.min(feedForward.size(), 1 << 16); l++) kinds.add(feedForward.get(l));
        return kinds;
    }

    /** Width of the concatenated query heads (may differ from hiddenSize in Qwen3). */
    public int queryDim() {
        return numAttentionHeads * headDim;
    }

    /** Width of the concatenated key (or value) heads. */
    public int kvDim() {
        return numKeyValueHeads * headDim;
    }

    /** The rotary embedding q and k turn by: rope_theta's, shaped by rope_scaling. */
    public Rope rope() {
        return ropeScaling.rope(headDim, ropeTheta);
    }
}
