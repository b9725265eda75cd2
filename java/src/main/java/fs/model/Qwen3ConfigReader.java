package fs.model;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.Quoted;
import fs.json.StrictJson;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Reads a Hugging Face config.json of a Qwen3 model; every problem is one FsException naming the file and field. */
final class Qwen3ConfigReader {
    private static final long MAX_CONFIG_BYTES = 10L * 1000 * 1000;
    private static final String ARCHITECTURE = "Qwen3ForCausalLM";
    private static final List<String> DEFAULT_ROPE_KEYS = List.of("rope_type", "type", "rope_theta");
    private static final List<String> YARN_KEYS = List.of("rope_type", "type", "rope_theta", "factor",
            "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim",
            "truncate");

    private final Path file;
    private final JsonNode root;

    private Qwen3ConfigReader(Path file, JsonNode root) {
        this.file = file;
        this.root = root;
    }

    static Qwen3Config read(Path file) {
        Qwen3ConfigReader reader = new Qwen3ConfigReader(file, StrictJson.readObjectFile(file, MAX_CONFIG_BYTES));
        Qwen3Config config = reader.config();
        reader.checkTokenIdsInVocabulary(config);
        return config;
    }

    private Qwen3Config config() {
        checkModelType();
        checkImplementedMath();
        RopeScaling ropeScaling = ropeScaling();
        int hidden = positiveInt("hidden_size");
        int heads = positiveInt("num_attention_heads");
        int kvHeads = has("num_key_value_heads") ? positiveInt("num_key_value_heads") : heads;
        if (heads % kvHeads != 0) {
            throw error("num_attention_heads (" + heads + ") is not a multiple of num_key_value_heads (" + kvHeads + ")");
        }
        int headDim;
        if (has("head_dim")) {
            headDim = positiveInt("head_dim");
        } else if (hidden % heads == 0) {
            headDim = hidden / heads;
        } else {
            throw error("head_dim is missing and hidden_size (" + hidden + ") is not a multiple of num_attention_heads ("
                    + heads + ")");
        }
        // Hugging Face's rotate-half RoPE pairs the two halves of a head; an odd head_dim has no such halves.
        if (headDim % 2 != 0) throw error("head_dim " + headDim + " must be even (RoPE rotates pairs of dimensions)");
        if ((long) heads * headDim > Integer.MAX_VALUE) {
            throw error("num_attention_heads (" + heads + ") times head_dim (" + headDim + ") is too large (the query width"
                    + " must fit in 2^31 - 1)");
        }
        return new Qwen3Config(
                hidden,
                positiveInt("num_hidden_layers"),
                heads,
                kvHeads,
                headDim,
                positiveInt("intermediate_size"),
                positiveInt("vocab_size"),
                positiveFloat(root, "rms_norm_eps"),
                ropeTheta(),
                ropeScaling,
                positiveInt("max_position_embeddings"),
                has("tie_word_embeddings") && bool("tie_word_embeddings"),
                tokenId(required("bos_token_id"), "bos_token_id"),
                eosTokenIds(),
                torchDtype());
    }

    private void checkModelType() {
        String modelType = text("model_type");
        if (!modelType.equals("qwen3")) throw error("model_type is " + Quoted.quote(modelType) + ", expected 'qwen3'");
        if (!has("architectures")) return;
        JsonNode architectures = root.get("architectures");
        if (!architectures.isArray()) throw error("architectures must be a list of names, found " + kind(architectures));
        for (JsonNode architecture : architectures) {
            if (architecture.isTextual() && architecture.textValue().equals(ARCHITECTURE)) return;
        }
        throw error("architectures is " + describe(architectures) + ", expected one to be '" + ARCHITECTURE + "'");
    }

    /**
     * Fields whose other values change the forward pass in ways fs does not implement: accepting them would run the
     * model with the wrong math and produce plausible-looking garbage. Absent means Qwen3's default, which fs does.
     */
    private void checkImplementedMath() {
        if (has("hidden_act") && !text("hidden_act").equals("silu")) {
            throw error("hidden_act is " + Quoted.quote(text("hidden_act")) + ": fs implements only 'silu'");
        }
        if (has("attention_bias") && bool("attention_bias")) {
            throw error("attention_bias is true: fs implements attention projections without bias");
        }
        if (has("use_sliding_window") && bool("use_sliding_window")) {
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

    /** An id past the embedding table would be read from outside it; a stop id there could never be generated. */
    private void checkTokenIdsInVocabulary(Qwen3Config config) {
        int vocab = config.vocabSize();
        if (config.bosTokenId() >= vocab) throw outsideVocabulary("bos_token_id", config.bosTokenId(), vocab);
        for (int id : config.eosTokenIds()) {
            if (id >= vocab) throw outsideVocabulary("eos_token_id", id, vocab);
        }
    }

    private FsException outsideVocabulary(String field, int id, int vocab) {
        return error(field + " " + id + " is outside the vocabulary (0.." + (vocab - 1) + ", from vocab_size)");
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
        JsonNode factorNode = node.get("factor");
        if (factorNode == null || factorNode.isNull()) throw error(field + ".factor is missing (YaRN needs it)");
        double factor = ropeNumber(field, node, "factor", 0);
        if (!(factor >= 1)) throw error(field + ".factor must be a number of at least 1, found " + describe(factorNode));
        double betaFast = positiveRopeNumber(field, node, "beta_fast", RopeScaling.Yarn.DEFAULT_BETA_FAST);
        double betaSlow = positiveRopeNumber(field, node, "beta_slow", RopeScaling.Yarn.DEFAULT_BETA_SLOW);
        if (betaFast < betaSlow) {
            throw error(field + ".beta_fast (" + betaFast + ") is below " + field + ".beta_slow (" + betaSlow + ")");
        }
        double mscale = ropeNumber(field, node, "mscale", 0);
        double mscaleAllDim = ropeNumber(field, node, "mscale_all_dim", 0);
        if (mscale < 0 || mscaleAllDim < 0) {
            throw error(field + ".mscale and " + field + ".mscale_all_dim must not be negative");
        }
        double attentionFactor = positiveRopeNumber(field, node, "attention_factor",
                RopeScaling.Yarn.defaultAttentionFactor(factor, mscale, mscaleAllDim));
        JsonNode truncate = node.get("truncate");
        if (truncate != null && !truncate.isNull() && !truncate.isBoolean()) {
            throw error(field + ".truncate must be true or false, found " + describe(truncate));
        }
        boolean truncated = truncate == null || truncate.isNull() || truncate.booleanValue();
        return new RopeScaling.Yarn(factor, originalMaxPositionEmbeddings(field, node), betaFast, betaSlow,
                attentionFactor, truncated);
    }

    private int originalMaxPositionEmbeddings(String field, JsonNode node) {
        String key = "original_max_position_embeddings";
        JsonNode inner = node.get(key);
        boolean hasInner = inner != null && !inner.isNull();
        if (hasInner && (!inner.isIntegralNumber() || !inner.canConvertToInt() || inner.intValue() <= 0)) {
            throw error(field + "." + key + " must be a positive integer, found " + describe(inner));
        }
        if (!has(key)) return hasInner ? inner.intValue() : positiveInt("max_position_embeddings");
        int outer = positiveInt(key);
        if (hasInner && inner.intValue() != outer) {
            throw error(field + "." + key + " (" + inner.intValue() + ") and " + key + " (" + outer + ") differ");
        }
        return outer;
    }

    /** A number in the rope's object, {@code absent} when it is missing or null. */
    private double ropeNumber(String field, JsonNode node, String key, double absent) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull()) return absent;
        if (!value.isNumber() || !Double.isFinite(value.doubleValue())) {
            throw error(field + "." + key + " must be a number, found " + describe(value));
        }
        return value.doubleValue();
    }

    private double positiveRopeNumber(String field, JsonNode node, String key, double absent) {
        double value = ropeNumber(field, node, key, absent);
        if (!(value > 0)) throw error(field + "." + key + " must be a positive number, found " + describe(node.get(key)));
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
        if (!inner) return positiveFloat(root, "rope_theta");
        float theta = positiveFloat(parameters, "rope_theta");
        if (has("rope_theta") && positiveFloat(root, "rope_theta") != theta) {
            throw error("rope_theta (" + positiveFloat(root, "rope_theta") + ") and " + field + ".rope_theta (" + theta
                    + ") differ");
        }
        return theta;
    }

    /** eos_token_id is one id or a list of ids. */
    private List<Integer> eosTokenIds() {
        JsonNode node = required("eos_token_id");
        if (!node.isArray()) return List.of(tokenId(node, "eos_token_id"));
        if (node.isEmpty()) throw error("eos_token_id is an empty list");
        List<Integer> ids = new ArrayList<>();
        for (JsonNode id : node) ids.add(tokenId(id, "eos_token_id"));
        return ids;
    }

    /** torch_dtype, called dtype since transformers 4.56. */
    private String torchDtype() {
        if (has("torch_dtype")) return text("torch_dtype");
        if (has("dtype")) return text("dtype");
        throw error("torch_dtype is missing");
    }

    private boolean has(String field) {
        JsonNode node = root.get(field);
        return node != null && !node.isNull();
    }

    private JsonNode required(String field) {
        if (!has(field)) throw error(field + " is missing");
        return root.get(field);
    }

    private int positiveInt(String field) {
        JsonNode node = required(field);
        if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() <= 0) {
            throw error(field + " must be a positive integer, found " + describe(node));
        }
        return node.intValue();
    }

    private int tokenId(JsonNode node, String field) {
        if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() < 0) {
            throw error(field + " must be a token id (a non-negative integer), found " + describe(node));
        }
        return node.intValue();
    }

    private float positiveFloat(JsonNode parent, String field) {
        JsonNode node = parent.get(field);
        if (node == null || node.isNull()) throw error(field + " is missing");
        float value = (float) node.doubleValue();
        if (!node.isNumber() || !(value > 0) || Float.isInfinite(value)) {
            throw error(field + " must be a positive number (as a float), found " + describe(node));
        }
        return value;
    }

    private boolean bool(String field) {
        JsonNode node = required(field);
        if (!node.isBoolean()) throw error(field + " must be true or false, found " + describe(node));
        return node.booleanValue();
    }

    private String text(String field) {
        JsonNode node = required(field);
        if (!node.isTextual()) throw error(field + " must be a string, found " + describe(node));
        return node.textValue();
    }

    private FsException error(String problem) {
        return new FsException(file + ": " + problem);
    }

    /** A value as a message shows it: its kind, and its text quoted (a string's own text; else its JSON). */
    private static String describe(JsonNode node) {
        return kind(node) + " " + Quoted.quote(node.isTextual() ? node.textValue() : node.toString());
    }

    private static String kind(JsonNode node) {
        return node.getNodeType().toString().toLowerCase();
    }
}
