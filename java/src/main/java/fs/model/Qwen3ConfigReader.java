package fs.model;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.safetensors.StrictJson;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Reads a Hugging Face config.json of a Qwen3 model; every problem is one FsException naming the file and field. */
final class Qwen3ConfigReader {
    private static final long MAX_CONFIG_BYTES = 10L * 1000 * 1000;
    private static final String ARCHITECTURE = "Qwen3ForCausalLM";

    private final Path file;
    private final JsonNode root;

    private Qwen3ConfigReader(Path file, JsonNode root) {
        this.file = file;
        this.root = root;
    }

    static Qwen3Config read(Path file) {
        return new Qwen3ConfigReader(file, StrictJson.readObjectFile(file, MAX_CONFIG_BYTES)).config();
    }

    private Qwen3Config config() {
        checkModelType();
        checkRopeScaling();
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
                positiveInt("max_position_embeddings"),
                has("tie_word_embeddings") && bool("tie_word_embeddings"),
                tokenId(required("bos_token_id"), "bos_token_id"),
                eosTokenIds(),
                torchDtype());
    }

    private void checkModelType() {
        String modelType = text("model_type");
        if (!modelType.equals("qwen3")) throw error("model_type is '" + modelType + "', expected 'qwen3'");
        if (!has("architectures")) return;
        JsonNode architectures = root.get("architectures");
        if (!architectures.isArray()) throw error("architectures must be a list of names, found " + kind(architectures));
        for (JsonNode architecture : architectures) {
            if (architecture.isTextual() && architecture.textValue().equals(ARCHITECTURE)) return;
        }
        throw error("architectures is " + architectures + ", expected one to be '" + ARCHITECTURE + "'");
    }

    /** The engine implements plain RoPE; a scaled variant would silently produce wrong logits at long context. */
    private void checkRopeScaling() {
        for (String field : List.of("rope_scaling", "rope_parameters")) {
            JsonNode node = root.get(field);
            if (node == null || node.isNull()) continue;
            JsonNode type = node.has("rope_type") ? node.get("rope_type") : node.get("type");
            if (type != null && !type.asText().equals("default")) {
                throw error(field + " of type '" + type.asText() + "' is not supported (only plain RoPE)");
            }
        }
    }

    /** rope_theta sits at the top level, or (transformers 5) inside rope_parameters. */
    private float ropeTheta() {
        if (has("rope_theta")) return positiveFloat(root, "rope_theta");
        JsonNode parameters = root.get("rope_parameters");
        if (parameters != null && parameters.isObject() && parameters.has("rope_theta")) {
            return positiveFloat(parameters, "rope_theta");
        }
        throw error("rope_theta is missing");
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

    private static String describe(JsonNode node) {
        String text = node.toString();
        return kind(node) + " " + (text.length() <= 40 ? text : text.substring(0, 40) + "…");
    }

    private static String kind(JsonNode node) {
        return node.getNodeType().toString().toLowerCase();
    }
}
