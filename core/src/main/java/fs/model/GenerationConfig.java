package fs.model;

import static fs.json.JsonFields.describe;
import static fs.json.JsonFields.shown;

import com.fasterxml.jackson.databind.JsonNode;
import fs.FsException;
import fs.json.JsonFields;
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
        JsonFields fields = JsonFields.of(StrictJson.readObjectFile(file, MAX_BYTES),
                problem -> new FsException(file + ": " + problem));
        GenerationConfig d = defaults();
        // bos_token_id is not used in generation, but one outside the vocabulary means the file is for another model.
        ids(fields, "bos_token_id", vocabSize);
        return new GenerationConfig(
                fields.bool("do_sample", d.doSample()),
                number(fields, "temperature", d.temperature(), 1.0f),
                topK(fields, d.topK()),
                number(fields, "top_p", d.topP(), 1.0f),
                number(fields, "min_p", d.minP(), 0f),
                number(fields, "repetition_penalty", d.repetitionPenalty(), 1.0f),
                ids(fields, "eos_token_id", vocabSize));
    }

    /** The field's value; {@code absent} when missing, {@code disabled} when null (Hugging Face's "not applied"). */
    private static float number(JsonFields fields, String field, float absent, float disabled) {
        JsonNode node = fields.get(field);
        if (node == null) return absent;
        if (node.isNull()) return disabled;
        return (float) fields.number(field);
    }

    /** top_k counts tokens: Hugging Face rejects a fractional one rather than rounding it. */
    private static int topK(JsonFields fields, int absent) {
        JsonNode node = fields.get("top_k");
        if (node == null) return absent;
        if (node.isNull()) return 0;
        if (!node.isIntegralNumber() || !node.canConvertToInt()) throw fields.mistyped("top_k", "a whole number", node);
        return node.intValue();
    }

    /** The field's token ids (one id or a list of them), each checked to lie in the vocabulary; empty when absent. */
    private static List<Integer> ids(JsonFields fields, String field, int vocabSize) {
        List<Integer> ids = new ArrayList<>();
        if (!fields.has(field)) return ids;
        JsonNode node = fields.get(field);
        if (!node.isIntegralNumber() && !node.isArray()) {
            throw fields.mistyped(field, "a token id or a list of them", node);
        }
        for (JsonNode id : node.isArray() ? node : List.of(node)) {
            if (!id.isIntegralNumber()) throw fields.error(field + " entries must be token ids, found " + describe(id));
            if (!id.canConvertToInt() || id.intValue() < 0 || id.intValue() >= vocabSize) {
                throw fields.error(field + " " + shown(id) + " is outside the vocabulary (0.." + (vocabSize - 1)
                        + ", from config.json's vocab_size)");
            }
            ids.add(id.intValue());
        }
        return ids;
    }
}
