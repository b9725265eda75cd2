package fs.source;

import fs.chat.ChatTemplate;
import fs.model.GenerationConfig;
import fs.model.ModelConfig;
import fs.model.ModelTensors;
import fs.model.Pooling;
import fs.model.TensorNaming;
import fs.safetensors.Checkpoint;
import fs.tensor.Tensor;
import fs.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A Hugging Face model directory: config.json, generation_config.json (optional), the safetensors checkpoint,
 * tokenizer.json and the chat template of tokenizer_config.json.
 */
public final class HuggingFaceSource implements ModelSource {
    private final Path directory;
    private final ModelConfig config;
    private final GenerationConfig generationConfig;
    private final Checkpoint checkpoint;
    private final ModelTensors tensors;

    private HuggingFaceSource(Path directory, ModelConfig config, GenerationConfig generationConfig,
            Checkpoint checkpoint) {
        this.directory = directory;
        this.config = config;
        this.generationConfig = generationConfig;
        this.checkpoint = checkpoint;
        Set<String> stored = checkpoint.tensors().stream().map(Tensor::name).collect(Collectors.toSet());
        this.tensors = new ModelTensors(directory, TensorNaming.ofCheckpoint(stored::contains), checkpoint.tensors());
    }

    static HuggingFaceSource open(Path directory) {
        ModelConfig config = ModelConfig.read(directory.resolve("config.json"));
        GenerationConfig generationConfig = GenerationConfig.read(directory, config.vocabSize());
        return new HuggingFaceSource(directory, config, generationConfig, Checkpoint.open(directory));
    }

    @Override
    public Path path() {
        return directory;
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

    /** The mapped safetensors files, for what only a checkpoint has (its files). */
    public Checkpoint checkpoint() {
        return checkpoint;
    }

    @Override
    public Tokenizer tokenizer() {
        return Tokenizer.load(directory, config.vocabSize()); // an id with no embedding row is refused here
    }

    @Override
    public Pooling pooling() {
        return EmbeddingSettings.pooling(directory, tensors.names());
    }

    @Override
    public OptionalInt appendedToken(Tokenizer tokenizer) {
        return EmbeddingSettings.appendedToken(directory, tokenizer);
    }

    @Override
    public ChatTemplate chatTemplate() {
        return ChatTemplate.load(directory);
    }

    @Override
    public Optional<Path> changedFile() {
        return checkpoint.changedFile();
    }

    @Override
    public void close() {
        checkpoint.close();
    }
}
