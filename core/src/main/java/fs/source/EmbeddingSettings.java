package fs.source;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import fs.FsException;
import fs.json.StrictJson;
import fs.model.Pooling;
import fs.model.TensorNaming;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * What a Hugging Face directory says about embedding with it, in the files sentence-transformers and the tokenizers
 * library read: the pooling (sentence-transformers' {@code 1_Pooling/config.json}; a bare Qwen3Model, stored without
 * {@code model.} and without lm_head as Qwen3-Embedding ships, pools its last token whether or not that file came
 * along) and the special token tokenizer.json's post_processor appends to a single text (Qwen3-Embedding's appends
 * {@code <|endoftext|>}).
 */
final class EmbeddingSettings {
    private static final long MAX_POOLING_CONFIG = 1 << 16;
    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private EmbeddingSettings() {}

    static Pooling pooling(Path directory, TensorNaming names) {
        Path config = directory.resolve("1_Pooling").resolve("config.json");
        if (Files.isRegularFile(config)) {
            JsonNode pooling = StrictJson.readObjectFile(config, MAX_POOLING_CONFIG);
            if (pooling.path("pooling_mode_lasttoken").asBoolean(false)) return Pooling.LAST;
            if (pooling.path("pooling_mode_mean_tokens").asBoolean(false)) return Pooling.MEAN;
            if (pooling.path("pooling_mode_cls_token").asBoolean(false)) return Pooling.CLS;
        }
        return names.headless() ? Pooling.LAST : Pooling.NONE;
    }

    /**
     * The special token the post_processor of {@code directory}'s tokenizer.json puts after a single text (a
     * TemplateProcessing, alone or in a Sequence of processors), if any, as an id of {@code tokenizer}.
     */
    static OptionalInt appendedToken(Path directory, Tokenizer tokenizer) {
        Path file = directory.resolve("tokenizer.json");
        JsonNode processor = postProcessor(file);
        if (processor == null) return OptionalInt.empty();
        JsonNode template = null;
        if ("TemplateProcessing".equals(processor.path("type").asText())) template = processor;
        for (JsonNode step : processor.path("processors")) {
            if ("TemplateProcessing".equals(step.path("type").asText())) template = step;
        }
        if (template == null) return OptionalInt.empty();
        JsonNode single = template.path("single");
        if (single.size() < 2) return OptionalInt.empty();
        JsonNode last = single.get(single.size() - 1).path("SpecialToken").path("id");
        if (!last.isTextual()) return OptionalInt.empty();
        OptionalInt id = tokenizer.tokenId(last.asText());
        if (id.isEmpty()) {
            throw new FsException(file + ": post_processor appends " + last + ", which is not in the vocabulary");
        }
        return id;
    }

    /** The top-level post_processor object (streamed past the vocabulary and merges), or null. */
    private static JsonNode postProcessor(Path file) {
        try (JsonParser p = new JsonFactory().createParser(file.toFile())) {
            if (p.nextToken() != JsonToken.START_OBJECT) return null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                if (name.equals("post_processor")) {
                    return p.currentToken() == JsonToken.START_OBJECT ? MAPPER.readTree(p) : null;
                }
                p.skipChildren();
            }
            return null;
        } catch (IOException e) {
            throw new FsException("cannot read " + file + ": " + e.getMessage());
        }
    }
}
