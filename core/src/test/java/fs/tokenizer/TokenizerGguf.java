package fs.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.gguf.GgufValueType;
import fs.gguf.GgufWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The tokenizer.ggml.* metadata llama.cpp's converter writes for a Hugging Face tokenizer.json (as in
 * models/q-tied/model-BF16.gguf): one token per id up to the embedding's rows, the unused ids as "[PADn]" of type
 * UNUSED, Hugging Face's special added tokens as CONTROL and its other added tokens as USER_DEFINED, merges as "a b".
 * Each key is a step that writes it, so a test can leave one out or change it.
 */
public final class TokenizerGguf {
    static final int NORMAL = 1;
    static final int CONTROL = 3;
    static final int USER_DEFINED = 4;
    static final int UNUSED = 5;

    private TokenizerGguf() {}

    public static Map<String, Consumer<GgufWriter>> keys(Path tokenizerJson, int rows) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(tokenizerJson.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String[] tokens = new String[rows];
        Integer[] types = new Integer[rows];
        for (int id = 0; id < rows; id++) {
            tokens[id] = "[PAD" + id + "]";
            types[id] = UNUSED;
        }
        root.get("model").get("vocab").properties().forEach(entry -> {
            tokens[entry.getValue().intValue()] = entry.getKey();
            types[entry.getValue().intValue()] = NORMAL;
        });
        for (JsonNode added : root.get("added_tokens")) {
            tokens[added.get("id").intValue()] = added.get("content").textValue();
            types[added.get("id").intValue()] = added.get("special").booleanValue() ? CONTROL : USER_DEFINED;
        }
        JsonNode mergeList = root.get("model").get("merges");
        String[] merges = new String[mergeList.size()];
        for (int i = 0; i < merges.length; i++) {
            JsonNode merge = mergeList.get(i);
            merges[i] = merge.isTextual() ? merge.textValue() : merge.get(0).textValue() + " " + merge.get(1).textValue();
        }
        Map<String, Consumer<GgufWriter>> keys = new LinkedHashMap<>();
        keys.put(GgufTokenizer.MODEL, w -> w.string(GgufTokenizer.MODEL, "gpt2"));
        keys.put(GgufTokenizer.PRE, w -> w.string(GgufTokenizer.PRE, "qwen2"));
        keys.put(GgufTokenizer.TOKENS, w -> w.array(GgufTokenizer.TOKENS, GgufValueType.STRING, (Object[]) tokens));
        keys.put(GgufTokenizer.TOKEN_TYPE, w -> w.array(GgufTokenizer.TOKEN_TYPE, GgufValueType.INT32, (Object[]) types));
        keys.put(GgufTokenizer.MERGES, w -> w.array(GgufTokenizer.MERGES, GgufValueType.STRING, (Object[]) merges));
        return keys;
    }

    /** A GGUF file with these keys and no tensors. */
    static Path write(Path file, Map<String, Consumer<GgufWriter>> keys) {
        GgufWriter writer = new GgufWriter();
        keys.values().forEach(key -> key.accept(writer));
        return writer.write(file);
    }
}
