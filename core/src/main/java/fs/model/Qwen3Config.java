package fs.model;

import fs.backend.Rope;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * The fields of a Qwen3 config.json that the engine uses. {@code headDim} is hidden / heads when config.json has
 * none; {@code eosTokenIds} holds every id that ends generation (config.json's eos_token_id, one id or a list);
 * {@code ropeScaling} is rope_scaling (or rope_parameters): plain RoPE or YaRN.
 */
public record Qwen3Config(
        int hiddenSize,
        int numHiddenLayers,
        int numAttentionHeads,
        int numKeyValueHeads,
        int headDim,
        int intermediateSize,
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
    public Qwen3Config {
        Objects.requireNonNull(ropeScaling, "ropeScaling");
        eosTokenIds = List.copyOf(eosTokenIds);
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
     * Reads a Hugging Face config.json. A missing or malformed field, or a model that is not a Qwen3ForCausalLM, is
     * one FsException naming the file and the field.
     */
    public static Qwen3Config read(Path configJson) {
        return Qwen3ConfigReader.read(configJson);
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
