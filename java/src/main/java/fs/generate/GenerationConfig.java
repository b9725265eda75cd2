package fs.generate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import java.io.IOException;
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

    public GenerationConfig {
        eosTokenIds = List.copyOf(eosTokenIds);
    }

    /** Hugging Face's defaults, with sampling on: what a model directory without generation_config.json gets. */
    public static GenerationConfig defaults() {
        return new GenerationConfig(true, 1.0f, 50, 1.0f, 0f, 1.0f, List.of());
    }

    /** Reads {@code modelDir/generation_config.json}, or returns {@link #defaults()} when there is none. */
    public static GenerationConfig read(Path modelDir) {
        Path file = modelDir.resolve(FILE_NAME);
        if (!Files.exists(file)) return defaults();
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(file.toFile());
        } catch (JsonProcessingException e) {
            throw new FsException(file + ": not valid JSON (" + e.getOriginalMessage() + ")", e);
        } catch (IOException e) {
            throw new FsException(file + ": cannot read (" + e.getMessage() + ")", e);
        }
        if (root == null || !root.isObject()) throw new FsException(file + ": expected a JSON object");
        GenerationConfig d = defaults();
        return new GenerationConfig(
                bool(file, root, "do_sample", d.doSample()),
                number(file, root, "temperature", d.temperature(), 1.0f),
                (int) number(file, root, "top_k", d.topK(), 0),
                number(file, root, "top_p", d.topP(), 1.0f),
                number(file, root, "min_p", d.minP(), 0f),
                number(file, root, "repetition_penalty", d.repetitionPenalty(), 1.0f),
                ids(file, root.get("eos_token_id")));
    }

    /**
     * The sampling parameters these defaults describe, with a fresh random seed; greedy when do_sample is false.
     * Apply the user's flags with {@link SamplingParams#withOverrides}.
     */
    public SamplingParams samplingParams() {
        long seed = SamplingParams.randomSeed();
        try {
            // Like Hugging Face, greedy decoding still applies the repetition penalty (a logits processor).
            if (!doSample) return new SamplingParams(0f, 0, 1f, 0f, repetitionPenalty, seed);
            return new SamplingParams(temperature, topK, topP, minP, repetitionPenalty, seed);
        } catch (FsException e) {
            throw new FsException(FILE_NAME + ": " + e.getMessage(), e);
        }
    }

    private static boolean bool(Path file, JsonNode root, String field, boolean absent) {
        JsonNode node = root.get(field);
        if (node == null || node.isNull()) return absent;
        if (!node.isBoolean()) throw new FsException(file + ": " + field + " must be true or false, got " + node);
        return node.booleanValue();
    }

    /** The field's value; {@code absent} when missing, {@code disabled} when null (Hugging Face's "not applied"). */
    private static float number(Path file, JsonNode root, String field, float absent, float disabled) {
        JsonNode node = root.get(field);
        if (node == null) return absent;
        if (node.isNull()) return disabled;
        if (!node.isNumber()) throw new FsException(file + ": " + field + " must be a number, got " + node);
        return node.floatValue();
    }

    private static List<Integer> ids(Path file, JsonNode node) {
        List<Integer> ids = new ArrayList<>();
        if (node == null || node.isNull()) return ids;
        if (node.isInt()) {
            ids.add(node.intValue());
            return ids;
        }
        if (node.isArray()) {
            for (JsonNode id : node) {
                if (!id.isInt()) throw new FsException(file + ": eos_token_id entries must be integers, got " + id);
                ids.add(id.intValue());
            }
            return ids;
        }
        throw new FsException(file + ": eos_token_id must be an integer or a list of integers, got " + node);
    }
}
