package fs.source;

import fs.FsException;
import fs.chat.ChatTemplate;
import fs.gguf.GgufFile;
import fs.gguf.GgufTensor;
import fs.gguf.GgufValueType;
import fs.model.GenerationConfig;
import fs.model.GgufConfigReader;
import fs.model.ModelConfig;
import fs.model.ModelTensors;
import fs.model.ModelWeights;
import fs.model.Pooling;
import fs.model.TensorNaming;
import fs.tensor.DType;
import fs.tensor.Tensor;
import fs.tokenizer.GgufTokenizer;
import fs.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A single GGUF file as llama.cpp writes one for architecture qwen3: the config from its qwen3.* metadata, the
 * tokenizer from tokenizer.ggml.*, the chat template from tokenizer.chat_template, and its tensors by their GGUF
 * names. A GGUF carries no generation_config.json, so sampling starts from Hugging Face's defaults. A reranker GGUF
 * ({@code pooling_type} rank, as llama.cpp converts Qwen3-Reranker) must have its classifier head
 * ({@link ModelWeights#RERANK_HEAD}), checked when the file is opened.
 */
public final class GgufSource implements ModelSource {
    static final String CHAT_TEMPLATE = "tokenizer.chat_template";
    private static final String ADD_EOS = "tokenizer.ggml.add_eos_token";
    /** What the rows of a reranker's classifier head are, in order: llama.cpp's converter writes these. */
    private static final List<String> RERANK_LABELS = List.of("yes", "no");

    /**
     * The tokens that end a turn besides the file's one eos id: Qwen3's generation_config.json stops at both, and
     * llama.cpp's end-of-generation set finds them by their text the same way.
     */
    private static final List<String> END_TOKENS = List.of("<|im_end|>", "<|endoftext|>");

    private final GgufFile file;
    private final ModelConfig config;
    private final GenerationConfig generationConfig;
    private final ModelTensors tensors;

    private GgufSource(GgufFile file, ModelConfig config, GenerationConfig generationConfig, ModelTensors tensors) {
        this.file = file;
        this.config = config;
        this.generationConfig = generationConfig;
        this.tensors = tensors;
    }

    static GgufSource open(Path path) {
        GgufFile file = GgufFile.open(path);
        try {
            ModelConfig config = GgufConfigReader.read(file);
            checkRerankHead(file, config);
            return new GgufSource(file, config, generationConfig(file), tensors(file));
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /**
     * A reranker GGUF ({@code pooling_type} rank) must have its classifier head, {@link ModelWeights#RERANK_HEAD}
     * (binding checks its shape), whose rows, when the file labels them ({@code {arch}.classifier.output_labels}),
     * are "yes" and "no" in that order: anything else is one FsException.
     */
    private static void checkRerankHead(GgufFile file, ModelConfig config) {
        String pooling = poolingKey(config);
        if (!file.metadata().has(pooling) || file.metadata().number(pooling) != Pooling.RANK.ordinal()) return;
        String labelsKey = config.architecture().ggufName() + ".classifier.output_labels";
        if (file.metadata().has(labelsKey)) {
            List<String> labels = List.of(file.metadata().array(labelsKey, GgufValueType.STRING).strings());
            if (!labels.equals(RERANK_LABELS)) {
                throw file.metadata().error(labelsKey, "is " + labels + "; fs scores a reranker whose classifier"
                        + " rows are " + RERANK_LABELS + ", as llama.cpp converts Qwen3-Reranker");
            }
        }
        if (file.tensor(ModelWeights.RERANK_HEAD).isEmpty()) {
            throw new FsException(file.path() + ": pooling_type is rank but the file has no "
                    + ModelWeights.RERANK_HEAD + " (the reranker's classifier head: the lm_head's \"yes\" and \"no\""
                    + " rows, as llama.cpp converts Qwen3-Reranker)");
        }
    }

    /** Hugging Face's sampling defaults, ending at the special tokens of {@link #END_TOKENS} the file has. */
    private static GenerationConfig generationConfig(GgufFile file) {
        List<Integer> endIds = GgufTokenizer.specialIds(file.metadata(), END_TOKENS);
        GenerationConfig defaults = GenerationConfig.defaults();
        return new GenerationConfig(defaults.doSample(), defaults.temperature(), defaults.topK(), defaults.topP(),
                defaults.minP(), defaults.repetitionPenalty(), endIds);
    }

    static Tokenizer readTokenizer(Path path) {
        try (GgufFile file = GgufFile.open(path)) {
            return GgufTokenizer.read(file);
        }
    }

    /**
     * The one place a GGUF tensor becomes a {@link Tensor}: the same bytes, in the same row-major shape (the reader
     * has already put GGUF's fastest-first dimensions in that order) and format. Whether a backend computes with that
     * format is the binder's and the backend's question, each answered by the format's name.
     */
    private static ModelTensors tensors(GgufFile file) {
        List<Tensor> tensors = new ArrayList<>();
        for (GgufTensor tensor : file.tensors()) {
            tensors.add(new Tensor(tensor.name(), tensor.type(), tensor.shape(), tensor.data()));
        }
        return new ModelTensors(file.path(), TensorNaming.GGUF, tensors);
    }

    /** The mapped file, for what only a GGUF has (its metadata, each tensor's ggml type). */
    public GgufFile file() {
        return file;
    }

    @Override
    public Path path() {
        return file.path();
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public GenerationConfig generationConfig() {
        return generationConfig;
    }

    @Override
    public ModelTensors tensors() {
        return tensors;
    }

    @Override
    public Tokenizer tokenizer() {
        return GgufTokenizer.read(file);
    }

    /** {@code {arch}.pooling_type}, as llama.cpp numbers it; none for a file without it (a causal LM). */
    @Override
    public Pooling pooling() {
        String key = poolingKey(config);
        if (!file.metadata().has(key)) return Pooling.NONE;
        int id = file.metadata().nonNegativeInt(key);
        return Pooling.ofLlamaCpp(id).orElseThrow(() -> file.metadata().error(key, "is " + id
                + ", not one of llama.cpp's pooling types 0..4 (none, mean, cls, last, rank)"));
    }

    private static String poolingKey(ModelConfig config) {
        return config.architecture().ggufName() + ".pooling_type";
    }

    /** The eos id when tokenizer.ggml.add_eos_token is true, as llama.cpp tokenizes with special tokens added. */
    @Override
    public OptionalInt appendedToken(Tokenizer tokenizer) {
        var metadata = file.metadata();
        if (!metadata.has(ADD_EOS) || !metadata.bool(ADD_EOS)) return OptionalInt.empty();
        return OptionalInt.of(metadata.nonNegativeInt("tokenizer.ggml.eos_token_id"));
    }

    @Override
    public ChatTemplate chatTemplate() {
        if (!file.metadata().has(CHAT_TEMPLATE)) {
            throw new FsException(file.path() + ": no chat template (the file has no " + CHAT_TEMPLATE + ")");
        }
        return ChatTemplate.of(file.metadata().string(CHAT_TEMPLATE), file.path() + " (" + CHAT_TEMPLATE + ")");
    }

    @Override
    public Optional<Path> changedFile() {
        return file.changedSinceOpen() ? Optional.of(file.path()) : Optional.empty();
    }

    @Override
    public void close() {
        file.close();
    }
}
