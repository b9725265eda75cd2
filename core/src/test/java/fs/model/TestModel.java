package fs.model;

import fs.backend.Backend;
import fs.safetensors.Checkpoint;
import java.nio.file.Path;

/**
 * A checkpoint built into a {@link Qwen3Model} on a backend with one {@link SingleSequence} on it, for tests; closing
 * frees the backend and the mapping.
 */
public record TestModel(Checkpoint checkpoint, Backend backend, SingleSequence sequence) implements AutoCloseable {

    public static TestModel open(Path dir, Backend backend, int contextLength, int batchRows, int logitRows) {
        return open(dir, dir.resolve("config.json"), backend, contextLength, batchRows, logitRows);
    }

    /** The weights of checkpoint {@code dir} under another config.json. */
    public static TestModel open(Path dir, Path configJson, Backend backend, int contextLength, int batchRows,
            int logitRows) {
        Checkpoint checkpoint = Checkpoint.open(dir);
        Qwen3Config config = Qwen3Config.read(configJson);
        Qwen3Model model = new Qwen3Model(config, Qwen3Weights.bind(config,
                new ModelTensors(dir, Qwen3TensorNames.HUGGING_FACE, checkpoint.tensors())), backend);
        return new TestModel(checkpoint, backend,
                new SingleSequence(model, new SingleSequence.Shape(contextLength, batchRows, logitRows)));
    }

    /** The loaded model, shared by every sequence run on it. */
    public Qwen3Model model() {
        return sequence.model();
    }

    @Override
    public void close() {
        try {
            backend.close();
        } finally {
            checkpoint.close();
        }
    }
}
