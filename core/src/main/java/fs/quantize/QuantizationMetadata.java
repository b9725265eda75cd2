package fs.quantize;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import fs.gguf.GgufArray;
import fs.gguf.GgufFile;
import fs.gguf.GgufValue;
import fs.gguf.GgufValueType;
import fs.json.JsonMessages;
import fs.model.FeedForward;
import fs.model.ModelConfig;
import fs.model.RopeScaling;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * The metadata of the file {@code fs quantize} writes. From a GGUF file: its own, as llama-quantize copies it, with
 * general.file_type and general.quantization_version set. From a Hugging Face directory: what llama.cpp's
 * convert_hf_to_gguf.py writes for a Qwen3 or Qwen3-MoE model (general.architecture qwen3 or qwen3moe, its
 * hyperparameters under that prefix, the tokenizer as tokenizer.ggml.* and the chat template), which fs's GGUF reader
 * and llama.cpp both load.
 */
public final class QuantizationMetadata {
    static final String FILE_TYPE = "general.file_type";
    static final String QUANTIZATION_VERSION = "general.quantization_version";
    /** ggml's GGML_QNT_VERSION: the block layouts of the quantized types, as llama-quantize stamps every file. */
    static final int QUANTIZATION_VERSION_VALUE = 2;
    /** llama.cpp's LLAMA_POOLING_TYPE_LAST. */
    private static final int LLAMA_POOLING_TYPE_LAST = 3;

    // llama.cpp's token types (llama_token_type), as convert_hf_to_gguf.py assigns them.
    private static final int NORMAL = 1;
    private static final int CONTROL = 3;
    private static final int USER_DEFINED = 4;
    private static final int UNUSED = 5;

    /** The special tokens SpecialVocab looks up, with the GGUF key each is written under. */
    private static final Map<String, String> SPECIAL_TOKENS = specialTokens();

    private QuantizationMetadata() {}

    private static Map<String, String> specialTokens() {
        Map<String, String> keys = new LinkedHashMap<>();
        keys.put("bos", "tokenizer.ggml.bos_token_id");
        keys.put("eos", "tokenizer.ggml.eos_token_id");
        keys.put("unk", "tokenizer.ggml.unknown_token_id");
        keys.put("sep", "tokenizer.ggml.seperator_token_id"); // sic: gguf-py's spelling, which llama.cpp reads
        keys.put("pad", "tokenizer.ggml.padding_token_id");
        keys.put("cls", "tokenizer.ggml.cls_token_id");
        keys.put("mask", "tokenizer.ggml.mask_token_id");
        return keys;
    }

    /**
     * A GGUF source's metadata with the new file type, in llama-quantize's order: split and earlier
     * quantize.imatrix.* keys are dropped (the output is one file, quantized anew).
     */
    public static Map<String, GgufValue> fromGguf(GgufFile source, QuantizationType type) {
        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        for (Map.Entry<String, GgufValue> entry : source.metadata().values().entrySet()) {
            String key = entry.getKey();
            if (key.startsWith("split.") || key.startsWith("quantize.imatrix.")) continue;
            metadata.put(key, key.equals("general.alignment")
                    ? uint32(source.alignment()) // any integer width reads; the writer takes llama.cpp's UINT32
                    : entry.getValue());
        }
        stamp(metadata, type);
        return metadata;
    }

    /**
     * The metadata of a Hugging Face directory, as convert_hf_to_gguf.py writes it for the model's architecture. A
     * mixture of experts gets its expert keys, and feed_forward_length from config.json's intermediate_size as
     * convert writes it though no qwen3moe layer is dense (fs quantize refuses a checkpoint with dense layers).
     */
    public static Map<String, GgufValue> fromHuggingFace(Path directory, ModelConfig config, QuantizationType type) {
        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        String architecture = config.architecture().ggufName();
        java.util.function.UnaryOperator<String> key = name -> architecture + "." + name;
        metadata.put("general.architecture", string(architecture));
        metadata.put("general.type", string("model"));
        Path name = directory.toAbsolutePath().normalize().getFileName();
        if (name != null) metadata.put("general.name", string(name.toString()));
        metadata.put(key.apply("block_count"), uint32(config.numHiddenLayers()));
        metadata.put(key.apply("context_length"), uint32(config.maxPositionEmbeddings()));
        metadata.put(key.apply("embedding_length"), uint32(config.hiddenSize()));
        config.feedForward().stream().filter(f -> f instanceof FeedForward.Dense).findFirst()
                .ifPresentOrElse(dense -> metadata.put(key.apply("feed_forward_length"), uint32(dense.width())),
                        () -> { // every layer sparse: convert_hf_to_gguf.py still writes intermediate_size
                            JsonNode width = json(directory.resolve("config.json")).path("intermediate_size");
                            if (width.canConvertToLong() && width.asLong() > 0) {
                                metadata.put(key.apply("feed_forward_length"), uint32(width.asLong()));
                            }
                        });
        metadata.put(key.apply("attention.head_count"), uint32(config.numAttentionHeads()));
        metadata.put(key.apply("attention.head_count_kv"), uint32(config.numKeyValueHeads()));
        metadata.put(key.apply("rope.freq_base"), float32(config.ropeTheta()));
        if (config.ropeScaling() instanceof RopeScaling.Yarn yarn) {
            metadata.put(key.apply("rope.scaling.type"), string("yarn"));
            metadata.put(key.apply("rope.scaling.factor"), float32((float) yarn.factor()));
            metadata.put(key.apply("rope.scaling.original_context_length"), uint32(yarn.originalMaxPositionEmbeddings()));
        }
        metadata.put(key.apply("attention.layer_norm_rms_epsilon"), float32(config.rmsNormEps()));
        metadata.put(key.apply("attention.key_length"), uint32(config.headDim()));
        metadata.put(key.apply("attention.value_length"), uint32(config.headDim()));
        config.feedForward().stream().filter(f -> f instanceof FeedForward.Experts).findFirst().ifPresent(f -> {
            FeedForward.Experts experts = (FeedForward.Experts) f;
            metadata.put(key.apply("expert_count"), uint32(experts.count()));
            metadata.put(key.apply("expert_used_count"), uint32(experts.used()));
            metadata.put(key.apply("expert_feed_forward_length"), uint32(experts.width()));
        });
        stamp(metadata, type);
        tokenizer(directory, config.vocabSize(), metadata);
        return metadata;
    }

    /** As llama-quantize sets them: ggml's gguf_set_val_* drops a key and appends it, so both come last. */
    private static void stamp(Map<String, GgufValue> metadata, QuantizationType type) {
        metadata.remove(QUANTIZATION_VERSION);
        metadata.remove(FILE_TYPE);
        metadata.put(QUANTIZATION_VERSION, uint32(QUANTIZATION_VERSION_VALUE));
        metadata.put(FILE_TYPE, uint32(type.fileType()));
    }

    /**
     * What makes the file an embedding model for llama.cpp and fs, as llama.cpp's GGUFs of Qwen3-Embedding carry it:
     * {@code {arch}.pooling_type} 3 (last token) and, when the checkpoint's tokenizer appends a token to a text, that
     * token as the eos with {@code tokenizer.ggml.add_eos_token} (llama.cpp appends the eos when it is set).
     */
    public static void recordLastTokenPooling(Map<String, GgufValue> metadata, ModelConfig config,
                                              OptionalInt appended) {
        metadata.put(config.architecture().ggufName() + ".pooling_type", uint32(LLAMA_POOLING_TYPE_LAST));
        if (appended.isPresent()) {
            metadata.put("tokenizer.ggml.eos_token_id", uint32(appended.getAsInt()));
            metadata.put("tokenizer.ggml.add_eos_token", new GgufValue(GgufValueType.BOOL, true));
        }
    }

    /** An importance matrix's provenance, as llama-quantize records it in the file it weighed. */
    public static void recordImportance(Map<String, GgufValue> metadata, Path file, ImportanceMatrix matrix) {
        metadata.put("quantize.imatrix.file", string(file.toString()));
        if (!matrix.datasets().isEmpty()) {
            metadata.put("quantize.imatrix.dataset", string(matrix.datasets().getFirst()));
        }
        metadata.put("quantize.imatrix.entries_count", uint32(matrix.tensors().size()));
        if (matrix.chunkCount() > 0) metadata.put("quantize.imatrix.chunks_count", uint32(matrix.chunkCount()));
    }

    /**
     * tokenizer.ggml.* and the chat template from tokenizer.json, tokenizer_config.json and config.json, as
     * convert_hf_to_gguf.py's _set_vocab_gpt2 and gguf-py's SpecialVocab write them: one token per id up to the
     * embedding's rows ([PADn], UNUSED, where no token has the id), an added token CONTROL when it is special or
     * looks special (&lt;|…|&gt;), else USER_DEFINED; the merges as "a b"; the special ids from
     * tokenizer_config.json's *_token (else config.json's *_token_id).
     */
    private static void tokenizer(Path directory, int vocabSize, Map<String, GgufValue> metadata) {
        Path tokenizerJson = directory.resolve("tokenizer.json");
        JsonNode tokenizer = json(tokenizerJson);
        JsonNode model = tokenizer.path("model");
        if (!"BPE".equals(model.path("type").asText())) {
            throw new FsException(tokenizerJson + ": model.type is " + model.path("type")
                    + ", fs quantize writes byte-level BPE tokenizers (Qwen3's) only");
        }
        String[] tokens = new String[vocabSize];
        int[] types = new int[vocabSize];
        for (var entry : model.path("vocab").properties()) {
            int id = id(tokenizerJson, entry.getValue(), vocabSize, "model.vocab[" + entry.getKey() + "]");
            tokens[id] = entry.getKey();
            types[id] = NORMAL;
        }
        Map<String, Integer> addedIds = new LinkedHashMap<>();
        for (JsonNode added : tokenizer.path("added_tokens")) {
            String content = added.path("content").asText();
            int id = id(tokenizerJson, added.path("id"), vocabSize, "added token " + content);
            tokens[id] = content;
            types[id] = added.path("special").asBoolean() || looksSpecial(content) ? CONTROL : USER_DEFINED;
            addedIds.put(content, id);
        }
        long[] tokenTypes = new long[vocabSize];
        for (int id = 0; id < vocabSize; id++) {
            if (tokens[id] == null) {
                tokens[id] = "[PAD" + id + "]";
                types[id] = UNUSED;
            }
            tokenTypes[id] = types[id];
        }
        JsonNode mergesNode = model.path("merges");
        String[] merges = new String[mergesNode.size()];
        for (int i = 0; i < merges.length; i++) {
            JsonNode merge = mergesNode.get(i);
            merges[i] = merge.isArray() ? merge.get(0).asText() + " " + merge.get(1).asText() : merge.asText();
        }
        metadata.put("tokenizer.ggml.model", string("gpt2"));
        metadata.put("tokenizer.ggml.pre", string("qwen2")); // Qwen2 and Qwen3 share the pre-tokenizer
        metadata.put("tokenizer.ggml.tokens", strings(tokens));
        metadata.put("tokenizer.ggml.token_type",
                new GgufValue(GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, tokenTypes)));
        metadata.put("tokenizer.ggml.merges", strings(merges));

        Path configPath = directory.resolve("tokenizer_config.json");
        JsonNode tokenizerConfig = Files.isRegularFile(configPath) ? json(configPath) : null;
        JsonNode config = json(directory.resolve("config.json"));
        for (Map.Entry<String, String> special : SPECIAL_TOKENS.entrySet()) {
            Integer id = null;
            if (tokenizerConfig != null) {
                JsonNode token = tokenizerConfig.path(special.getKey() + "_token");
                String content = token.isTextual() ? token.asText() : token.path("content").isTextual()
                        ? token.path("content").asText() : null;
                if (content != null) id = addedIds.get(content);
            }
            JsonNode fromConfig = config.path(special.getKey() + "_token_id");
            if (id == null && fromConfig.isInt()) id = fromConfig.asInt();
            if (id != null && id >= 0 && id < vocabSize) metadata.put(special.getValue(), uint32(id));
        }
        if (tokenizerConfig != null) {
            for (String add : List.of("bos", "eos")) {
                JsonNode flag = tokenizerConfig.path("add_" + add + "_token");
                if (flag.isBoolean()) {
                    metadata.put("tokenizer.ggml.add_" + add + "_token",
                            new GgufValue(GgufValueType.BOOL, flag.asBoolean()));
                }
            }
        }
        String template = chatTemplate(directory, tokenizerConfig);
        if (template != null) metadata.put("tokenizer.chat_template", string(template));
    }

    /** convert_hf_to_gguf.py's does_token_look_special, for the added tokens it marks CONTROL though not special. */
    private static boolean looksSpecial(String token) {
        return List.of("<pad>", "<mask>", "<2mass>", "[@BOS@]").contains(token)
                || (token.startsWith("<|") && token.endsWith("|>"))
                || (token.startsWith("<｜") && token.endsWith("｜>"))
                || (token.startsWith("<unused") && token.endsWith(">"));
    }

    private static String chatTemplate(Path directory, JsonNode tokenizerConfig) {
        if (tokenizerConfig != null && tokenizerConfig.path("chat_template").isTextual()) {
            return tokenizerConfig.path("chat_template").asText();
        }
        Path jinja = directory.resolve("chat_template.jinja");
        if (!Files.isRegularFile(jinja)) return null;
        try {
            return Files.readString(jinja);
        } catch (IOException e) {
            throw FsException.cannotRead(jinja, e);
        }
    }

    private static int id(Path file, JsonNode id, int vocabSize, String what) {
        if (!id.isInt() || id.asInt() < 0 || id.asInt() >= vocabSize) {
            throw new FsException(file + ": " + what + " has id " + id + ", outside the model's " + vocabSize
                    + " embedding rows");
        }
        return id.asInt();
    }

    private static JsonNode json(Path file) {
        try {
            return new ObjectMapper().readTree(file.toFile());
        } catch (JsonProcessingException e) {
            throw new FsException(file + ": " + JsonMessages.describe(e));
        } catch (IOException e) {
            throw FsException.cannotRead(file, e);
        }
    }

    private static GgufValue string(String value) {
        return new GgufValue(GgufValueType.STRING, value);
    }

    private static GgufValue strings(String[] values) {
        return new GgufValue(GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, values));
    }

    private static GgufValue uint32(long value) {
        return new GgufValue(GgufValueType.UINT32, value);
    }

    private static GgufValue float32(float value) {
        return new GgufValue(GgufValueType.FLOAT32, (double) value);
    }
}
