package fs.model;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.Quoted;
import fs.json.StrictJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The sampling defaults and end-of-sequence ids a model ships in its generation_config.json (Qwen3: do_sample true,
 * temperature 0.6, top_k 20, top_p 0.95, eos_token_id [151645, 151643]).
 *
 * <p>Sampling is on unless the file says {@code "do_sample": false}; then generation is greedy. Without the file, or
 * for a field the file leaves out, the value is Hugging Face's default (temperature 1.0, top_k 50, top_p 1.0, no
 * min_p, repetition_penalty 1.0). Hugging Face itself would be greedy when do_sample is absent; a command-line tool is
 * expected to sample (llama.cpp does), and a model that wants greedy decoding says so with do_sample false.
 *
 * <p>It is the model's description, read with its config; {@code SamplingParams.of} turns it into a sampler's.
 *
 * @param eosTokenIds generation_config.json's eos_token_id (one id or a list), empty when absent; generation should
 *                    stop on these and on config.json's eos ids
 */
public record GenerationConfig(
        boolean doSample,
        float temperature,
        int topK,
        float topP,
        float minP,
        float repetitionPenalty,
        List<Integer> eosTokenIds) {

    public static final String FILE_NAME = "generation_config.json";
    private static final long MAX_BYTES = 1000L * 1000;

    public GenerationConfig {
        eosTokenIds = List.copyOf(eosTokenIds);
    }

    /** Hugging Face's defaults, with sampling on: what a model directory without generation_config.json gets. */
    public static GenerationConfig defaults() {
        return new GenerationConfig(true, 1.0f, 50, 1.0f, 0f, 1.0f, List.of());
    }

    /**
     * Reads {@code modelDir/generation_config.json}, or returns {@link #defaults()} when there is none. Its token ids
     * must lie in the model's vocabulary of {@code vocabSize} ids (config.json's vocab_size).
     */
    public static GenerationConfig read(Path modelDir, int vocabSize) {
        Path file = modelDir.resolve(FILE_NAME);
        if (!Files.exists(file)) return defaults();
        JsonNode root = StrictJson.readObjectFile(file, MAX_BYTES);
        GenerationConfig d = defaults();
        // bos_token_id is not used in generation, but one outside the vocabulary means the file is for another model.
        ids(file, root, "bos_token_id", vocabSize);
        return new GenerationConfig(
                bool(file, root, "do_sample", d.doSample()),
                number(file, root, "temperature", d.temperature(), 1.0f),
                topK(file, root, d.topK()),
                number(file, root, "top_p", d.topP(), 1.0f),
                number(file, root, "min_p", d.minP(), 0f),
                number(file, root, "repetition_penalty", d.repetitionPenalty(), 1.0f),
                ids(file, root, "eos_token_id", vocabSize));
    }

    private static boolean bool(Path file, JsonNode root, String field, boolean absent) {
        JsonNode node = root.get(field);
        if (node == null || node.isNull()) return absent;
        if (!node.isBoolean()) throw new FsException(file + ": " + field + " must be true or false, got " + shown(node));
        return node.booleanValue();
    }

    /** The field's value; {@code absent} when missing, {@code disabled} when null (Hugging Face's "not applied"). */
    private static float number(Path file, JsonNode root, String field, float absent, float disabled) {
        JsonNode node = root.get(field);
        if (node == null) return absent;
        if (node.isNull()) return disabled;
        if (!node.isNumber()) throw new FsException(file + ": " + field + " must be a number, got " + shown(node));
        return node.floatValue();
    }

    /** top_k counts tokens: Hugging Face rejects a fractional one rather than rounding it. */
    private static int topK(Path file, JsonNode root, int absent) {
        JsonNode node = root.get("top_k");
        if (node == null) return absent;
        if (node.isNull()) return 0;
        if (!node.isIntegralNumber() || !node.canConvertToInt()) {
            throw new FsException(file + ": top_k must be a whole number, got " + shown(node));
        }
        return node.intValue();
    }

    /** The field's token ids (one id or a list of them), each checked to lie in the vocabulary; empty when absent. */
    private static List<Integer> ids(Path file, JsonNode root, String field, int vocabSize) {
        JsonNode node = root.get(field);
        List<Integer> ids = new ArrayList<>();
        if (node == null || node.isNull()) return ids;
        if (!node.isIntegralNumber() && !node.isArray()) {
            throw new FsException(file + ": " + field + " must be a token id or a list of them, got " + shown(node));
        }
        for (JsonNode id : node.isArray() ? node : List.of(node)) {
            if (!id.isIntegralNumber()) {
                throw new FsException(file + ": " + field + " entries must be token ids, got " + shown(id));
            }
            if (!id.canConvertToInt() || id.intValue() < 0 || id.intValue() >= vocabSize) {
                throw new FsException(file + ": " + field + " " + shown(id) + " is outside the vocabulary (0.."
                        + (vocabSize - 1) + ", from config.json's vocab_size)");
            }
            ids.add(id.intValue());
        }
        return ids;
    }

    /** A value as a message shows it: a string quoted, anything else as its JSON, cut short. */
    private static String shown(JsonNode node) {
        if (node.isTextual()) return Quoted.quote(node.textValue());
        String text = node.toString();
        return text.length() <= 40 ? text : text.substring(0, 40) + "…";
    }
}
