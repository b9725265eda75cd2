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

    public Qwen3Config {
        Objects.requireNonNull(ropeScaling, "ropeScaling");
        eosTokenIds = List.copyOf(eosTokenIds);
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
