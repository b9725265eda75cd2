package fs.source;

import fs.chat.ChatTemplate;
import fs.model.GenerationConfig;
import fs.model.ModelTensors;
import fs.model.Qwen3Config;
import fs.model.Qwen3TensorNames;
import fs.safetensors.Checkpoint;
import fs.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * A Hugging Face model directory: config.json, generation_config.json (optional), the safetensors checkpoint,
 * tokenizer.json and the chat template of tokenizer_config.json.
 */
public final class HuggingFaceSource implements ModelSource {
    private final Path directory;
    private final Qwen3Config config;
    private final GenerationConfig generationConfig;
    private final Checkpoint checkpoint;
    private final ModelTensors tensors;

    private HuggingFaceSource(Path directory, Qwen3Config config, GenerationConfig generationConfig,
            Checkpoint checkpoint) {
        this.directory = directory;
        this.config = config;
        this.generationConfig = generationConfig;
        this.checkpoint = checkpoint;
        this.tensors = new ModelTensors(directory, Qwen3TensorNames.HUGGING_FACE, checkpoint.tensors());
    }

    static HuggingFaceSource open(Path directory) {
        Qwen3Config config = Qwen3Config.read(directory.resolve("config.json"));
        GenerationConfig generationConfig = GenerationConfig.read(directory, config.vocabSize());
        return new HuggingFaceSource(directory, config, generationConfig, Checkpoint.open(directory));
    }

    @Override
    public Path path() {
        return directory;
    }

    @Override
    public Qwen3Config config() {
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
