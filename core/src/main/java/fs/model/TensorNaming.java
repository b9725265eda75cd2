package fs.model;

import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * How a model source names the tensors of a model: Hugging Face's module paths (model.layers.N.self_attn.q_proj
 * .weight) or llama.cpp's GGUF names (blk.N.attn_q.weight); a layer's tensors are named by their {@link TensorRole}.
 * Both store every matrix as [out, in], and Qwen3's GGUF conversion leaves q and k unpermuted (its NEOX rope is
 * Hugging Face's rotate-half), so only the names differ, and how an expert's matrices are stored: one tensor each in a
 * checkpoint, one [experts, out, in] stack in a GGUF file. A bare Qwen3Model (its module paths without {@code model.},
 * and no lm_head: how Qwen3-Embedding ships) is {@link #HUGGING_FACE_BARE}.
 */
public enum TensorNaming {
    HUGGING_FACE("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight", "model.layers.",
            "config.json", "checkpoint"),
    HUGGING_FACE_BARE("embed_tokens.weight", "norm.weight", "lm_head.weight", "layers.", "config.json", "checkpoint"),
    GGUF("token_embd.weight", "output_norm.weight", "output.weight", "blk.", "the file's metadata", "file");

    private final String embedding;
    private final String norm;
    private final String output;
    private final String layerPrefix;
    private final String configName;
    private final String storage;
    private final Pattern layerTensor;

    TensorNaming(String embedding, String norm, String output, String layerPrefix, String configName,
            String storage) {
        this.embedding = embedding;
        this.norm = norm;
        this.output = output;
        this.layerPrefix = layerPrefix;
        this.configName = configName;
        this.storage = storage;
        this.layerTensor = Pattern.compile(Pattern.quote(layerPrefix) + "(0|[1-9][0-9]*)\\..*");
    }

    public String embedding() {
        return embedding;
    }

    /** The final norm, before the output projection. */
    public String norm() {
        return norm;
    }

    /** The output projection; absent when the embeddings are tied. */
    public String output() {
        return output;
    }

    /** The name of layer {@code layer}'s tensor of {@code role}; for an expert's matrix, the GGUF stack. */
    public String layer(int layer, TensorRole role) {
        if (role.perExpert() && !stacksExperts()) {
            throw new IllegalArgumentException(this + " stores " + role + " per expert: name one expert");
        }
        return layerPrefix + layer + "." + role.name(this);
    }

    /** The name of one expert's matrix of {@code role} in layer {@code layer} (Hugging Face's per-expert tensors). */
    public String expert(int layer, TensorRole role, int expert) {
        if (!role.perExpert() || stacksExperts()) throw new IllegalArgumentException(this + " has no " + role + " per expert");
        return layerPrefix + layer + "." + role.name(this).formatted(expert);
    }

    /**
     * How a checkpoint names its tensors: bare when it stores {@code embed_tokens.weight} and no
     * {@code model.embed_tokens.weight}.
     */
    public static TensorNaming ofCheckpoint(Predicate<String> stored) {
        return stored.test(HUGGING_FACE_BARE.embedding) && !stored.test(HUGGING_FACE.embedding) ? HUGGING_FACE_BARE
                : HUGGING_FACE;
    }

    /** Whether the source is a model without an output projection: a bare Qwen3Model, pooled for embeddings. */
    public boolean headless() {
        return this == HUGGING_FACE_BARE;
    }

    /** Whether an expert's matrices are one stack per layer (GGUF) rather than one tensor per expert. */
    public boolean stacksExperts() {
        return this == GGUF;
    }

    /** What the config was read from, for messages: "config.json", "the file's metadata". */
    String configName() {
        return configName;
    }

    /** The config field that counts the layers. */
    String layerCountKey(Architecture architecture) {
        return this == GGUF ? architecture.ggufName() + ".block_count" : "num_hidden_layers";
    }

    /** What holds the tensors, for messages: "checkpoint", "file". */
    String storage() {
        return storage;
    }

    /** The layer a tensor name belongs to (its digits, as stored), or null for a tensor outside the layers. */
    String layerOf(String tensorName) {
        var matcher = layerTensor.matcher(tensorName);
        return matcher.matches() ? matcher.group(1) : null;
    }
}
