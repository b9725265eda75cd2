package fs.model;

import static fs.json.JsonFields.describe;
import static fs.json.JsonFields.kind;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.Quoted;
import fs.json.JsonFields;
import fs.json.StrictJson;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Reads a Hugging Face config.json of any {@link Architecture}: model_type picks the architecture, which reads its own
 * fields through this reader; every problem is one FsException naming the file and field.
 */
final class HuggingFaceConfigReader {
    private static final long MAX_CONFIG_BYTES = 10L * 1000 * 1000;
    private static final List<String> DEFAULT_ROPE_KEYS = List.of("rope_type", "type", "rope_theta");
    private static final List<String> YARN_KEYS = List.of("rope_type", "type", "rope_theta", "factor",
            "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim",
            "truncate");

    private final Path file;
    private final JsonNode root;
    private final JsonFields fields;

    private HuggingFaceConfigReader(Path file, JsonNode root) {
        this.file = file;
        this.root = root;
        this.fields = JsonFields.of(root, this::error);
    }

    static ModelConfig read(Path file) {
        return new HuggingFaceConfigReader(file, StrictJson.readObjectFile(file, MAX_CONFIG_BYTES)).config();
    }

    private ModelConfig config() {
        Architecture architecture = architecture();
        checkImplementedMath();
        RopeScaling ropeScaling = ropeScaling();
        int hidden = fields.positiveInt("hidden_size");
        int heads = fields.positiveInt("num_attention_heads");
        int kvHeads = has("num_key_value_heads") ? fields.positiveInt("num_key_value_heads") : heads;
        int headDim;
        if (has("head_dim")) {
            headDim = fields.positiveInt("head_dim");
        } else if (hidden % heads == 0) {
            headDim = hidden / heads;
        } else {
            throw error("head_dim is missing and hidden_size (" + hidden + ") is not a multiple of num_attention_heads ("
                    + heads + ")");
        }
        int layers = fields.positiveInt("num_hidden_layers");
        List<FeedForward> feedForward = architecture.feedForward(this, layers);
        int vocab = fields.positiveInt("vocab_size");
        float eps = fields.positiveFloat("rms_norm_eps");
        float theta = ropeTheta();
        int maxPositions = fields.positiveInt("max_position_embeddings");
        boolean tied = fields.bool("tie_word_embeddings", false);
        int bos = tokenId(fields.required("bos_token_id"), "bos_token_id");
        List<Integer> eos = eosTokenIds();
        String dtype = torchDtype();
        try {
            return new ModelConfig(architecture, hidden, layers, heads, kvHeads, headDim, feedForward, vocab, eps, theta,
                    ropeScaling, maxPositions, tied, bos, eos, dtype);
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage()); // what ModelConfig checks across fields
        }
    }

    /** model_type's architecture, which architectures (when present) must name by its class. */
    private Architecture architecture() {
        String modelType = fields.text("model_type");
        Architecture architecture = Architecture.byModelType(modelType).orElseThrow(() -> error("model_type is "
                + Quoted.quote(modelType) + ", expected one of " + Architecture.expected(Architecture::modelType)));
        if (!has("architectures")) return architecture;
        JsonNode architectures = root.get("architectures");
        if (!architectures.isArray()) throw error("architectures must be a list of names, found " + kind(architectures));
        for (JsonNode name : architectures) {
            if (name.isTextual() && name.textValue().equals(architecture.huggingFaceClass())) return architecture;
        }
        throw error("architectures is " + describe(architectures) + ", expected one to be '"
                + architecture.huggingFaceClass() + "'");
    }

    int positiveInt(String field) {
        return fields.positiveInt(field);
    }

    boolean bool(String field, boolean absent) {
        return fields.bool(field, absent);
    }

    /** A list of layer indices (mlp_only_layers), each in 0..layers-1; empty when absent or null. */
    Set<Integer> layerSet(String field, int layers) {
        Set<Integer> set = new TreeSet<>();
        if (!has(field)) return set;
        JsonNode node = root.get(field);
        if (!node.isArray()) throw error(field + " must be a list of layer indices, found " + describe(node));
        for (JsonNode index : node) {
            if (!index.isIntegralNumber() || !index.canConvertToInt() || index.intValue() < 0
                    || index.intValue() >= layers) {
                throw error(field + " has " + describe(index) + ", not a layer index in 0.." + (layers - 1));
            }
            set.add(index.intValue());
        }
        return set;
    }

    /** What the architecture builds from this file's fields, its IllegalArgumentException as this file's error. */
    <T> T checked(Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage());
        }
    }

    /**
     * Fields whose other values change the forward pass in ways fs does not implement: accepting them would run the
     * model with the wrong math and produce plausible-looking garbage. Absent means Qwen3's default, which fs does.
     */
    private void checkImplementedMath() {
        if (has("hidden_act") && !fields.text("hidden_act").equals("silu")) {
            throw error("hidden_act is " + Quoted.quote(fields.text("hidden_act")) + ": fs implements only 'silu'");
        }
        if (fields.bool("attention_bias", false)) {
            throw error("attention_bias is true: fs implements attention projections without bias");
        }
        if (fields.bool("use_sliding_window", false)) {
            throw error("use_sliding_window is true: fs implements only full attention");
        }
        if (has("layer_types")) {
            JsonNode types = root.get("layer_types");
            if (!types.isArray()) throw error("layer_types must be a list of names, found " + describe(types));
            for (JsonNode type : types) {
                if (!type.isTextual() || !type.textValue().equals("full_attention")) {
                    throw error("layer_types has " + (type.isTextual() ? Quoted.quote(type.textValue()) : describe(type))
                            + ": fs implements only 'full_attention'");
                }
            }
        }
    }

    /**
     * rope_scaling, or rope_parameters (transformers 5): plain RoPE when null, absent, empty or of type "default"; YaRN
     * with every field checked. Any other type, or a key fs does not read, would silently give wrong logits (at long
     * context, or everywhere), so it is refused by name.
     */
    private RopeScaling ropeScaling() {
        String field = ropeField();
        if (field == null) return new RopeScaling.Plain();
        JsonNode node = root.get(field);
        String type = ropeType(field, node);
        return switch (type) {
            case "default" -> {
                checkRopeKeys(field, node, type, DEFAULT_ROPE_KEYS);
                yield new RopeScaling.Plain();
            }
            case "yarn" -> {
                checkRopeKeys(field, node, type, YARN_KEYS);
                yield yarn(field, node);
            }
            default -> throw error(field + " of type " + Quoted.quote(type) + " is not supported (fs implements plain RoPE and YaRN)");
        };
    }

    /** Which of rope_scaling and rope_parameters holds the rope's parameters; null when neither is set. */
    private String ropeField() {
        String found = null;
        for (String field : List.of("rope_scaling", "rope_parameters")) {
            if (!has(field)) continue;
            JsonNode node = root.get(field);
            if (!node.isObject()) throw error(field + " must be an object or null, found " + describe(node));
            // transformers 5 takes rope_scaling over rope_parameters; two different ones are a config to fix.
            if (found != null && !node.equals(root.get(found))) {
                throw error(found + " and " + field + " are both set and differ; keep one");
            }
            if (found == null) found = field;
        }
        return found;
    }

    /** rope_type, or the older key type; "default" (transformers' default) when neither is there. */
    private String ropeType(String field, JsonNode node) {
        JsonNode ropeType = node.get("rope_type");
        JsonNode legacy = node.get("type");
        if (ropeType != null && legacy != null && !ropeType.equals(legacy)) {
            throw error(field + ".rope_type (" + describe(ropeType) + ") and " + field + ".type (" + describe(legacy) + ") differ");
        }
        if (ropeType == null && legacy == null) return "default";
        String key = ropeType != null ? "rope_type" : "type";
        JsonNode type = node.get(key);
        if (!type.isTextual()) throw error(field + "." + key + " must be a string, found " + describe(type));
        return type.textValue();
    }

    private void checkRopeKeys(String field, JsonNode node, String type, List<String> known) {
        for (Map.Entry<String, JsonNode> entry : node.properties()) {
            if (!known.contains(entry.getKey())) {
                throw error(field + " key " + Quoted.quote(entry.getKey()) + " is not supported with rope type "
                        + Quoted.quote(type) + " (fs reads "
                        + String.join(", ", known) + ")");
            }
        }
    }

    /**
     * YaRN's fields, checked and resolved as transformers resolves them: original_max_position_embeddings defaults to
     * a top-level original_max_position_embeddings, then to max_position_embeddings; beta_fast and beta_slow to 32 and
     * 1; truncate to true; attention_factor to {@link RopeScaling.Yarn#defaultAttentionFactor}. factor is used as
     * given: transformers since August 2025 does so (it used to replace it with max_position_embeddings /
     * original_max_position_embeddings whenever rope_scaling held the latter), so a config whose two disagree gets
     * the factor it names.
     */
    private RopeScaling.Yarn yarn(String field, JsonNode node) {
        float theta = ropeTheta();
        if (!(theta > 1)) throw error("rope_theta must be above 1 for YaRN, found " + theta);
        JsonFields rope = fields.inner(field, node);
        if (!rope.has("factor")) throw error(field + ".factor is missing (YaRN needs it)");
        double factor = rope.number("factor");
        if (!(factor >= 1)) throw rope.mistyped("factor", "a number of at least 1", node.get("factor"));
        double betaFast = positiveNumber(rope, "beta_fast", RopeScaling.Yarn.DEFAULT_BETA_FAST);
        double betaSlow = positiveNumber(rope, "beta_slow", RopeScaling.Yarn.DEFAULT_BETA_SLOW);
        if (betaFast < betaSlow) {
            throw error(field + ".beta_fast (" + betaFast + ") is below " + field + ".beta_slow (" + betaSlow + ")");
        }
        double mscale = rope.has("mscale") ? rope.number("mscale") : 0;
        double mscaleAllDim = rope.has("mscale_all_dim") ? rope.number("mscale_all_dim") : 0;
        if (mscale < 0 || mscaleAllDim < 0) {
            throw error(field + ".mscale and " + field + ".mscale_all_dim must not be negative");
        }
        double attentionFactor = positiveNumber(rope, "attention_factor",
                RopeScaling.Yarn.defaultAttentionFactor(factor, mscale, mscaleAllDim));
        return new RopeScaling.Yarn(factor, originalMaxPositionEmbeddings(rope), betaFast, betaSlow,
                attentionFactor, rope.bool("truncate", true));
    }

    private int originalMaxPositionEmbeddings(JsonFields rope) {
        String key = "original_max_position_embeddings";
        Integer inner = rope.has(key) ? rope.positiveInt(key) : null;
        if (!has(key)) return inner != null ? inner : fields.positiveInt("max_position_embeddings");
        int outer = fields.positiveInt(key);
        if (inner != null && inner != outer) {
            throw error(rope.name(key) + " (" + inner + ") and " + key + " (" + outer + ") differ");
        }
        return outer;
    }

    /** A positive number in the rope's object, {@code absent} when it is missing or null. */
    private static double positiveNumber(JsonFields rope, String key, double absent) {
        if (!rope.has(key)) return absent;
        double value = rope.number(key);
        if (!(value > 0)) throw rope.mistyped(key, "a positive number", rope.get(key));
        return value;
    }

    /**
     * rope_theta sits at the top level, or (transformers 5) inside rope_parameters; transformers 5 takes the one
     * inside first, so two that differ are refused rather than guessed.
     */
    private float ropeTheta() {
        String field = ropeField();
        JsonNode parameters = field == null ? null : root.get(field);
        boolean inner = parameters != null && parameters.has("rope_theta") && !parameters.get("rope_theta").isNull();
        if (!has("rope_theta") && !inner) throw error("rope_theta is missing");
        if (!inner) return fields.positiveFloat("rope_theta");
        float theta = fields.inner(field, parameters).positiveFloat("rope_theta");
        if (has("rope_theta") && fields.positiveFloat("rope_theta") != theta) {
            throw error("rope_theta (" + fields.positiveFloat("rope_theta") + ") and " + field + ".rope_theta (" + theta
                    + ") differ");
        }
        return theta;
    }

    /** eos_token_id is one id or a list of ids. */
    private List<Integer> eosTokenIds() {
        JsonNode node = fields.required("eos_token_id");
        if (!node.isArray()) return List.of(tokenId(node, "eos_token_id"));
        if (node.isEmpty()) throw error("eos_token_id is an empty list");
        List<Integer> ids = new ArrayList<>();
        for (JsonNode id : node) ids.add(tokenId(id, "eos_token_id"));
        return ids;
    }

    /** torch_dtype, called dtype since transformers 4.56. */
    private String torchDtype() {
        if (has("torch_dtype")) return fields.text("torch_dtype");
        if (has("dtype")) return fields.text("dtype");
        throw error("torch_dtype is missing");
    }

    boolean has(String field) {
        return fields.has(field);
    }

    private int tokenId(JsonNode node, String field) {
        if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() < 0) {
            throw error(field + " must be a token id (a non-negative integer), found " + describe(node));
        }
        return node.intValue();
    }

    private FsException error(String problem) {
        return new FsException(file + ": " + problem);
    }
}
