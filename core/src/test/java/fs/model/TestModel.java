package fs.model;

import fs.backend.Backend;
import fs.safetensors.Checkpoint;
import java.nio.file.Path;

/**
 * A checkpoint built into a {@link DecoderModel} on a backend with one {@link SingleSequence} on it, for tests; closing
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
        ModelConfig config = ModelConfig.read(configJson);
        DecoderModel model = new DecoderModel(config, ModelWeights.bind(config,
                new ModelTensors(dir, TensorNaming.HUGGING_FACE, checkpoint.tensors())), backend);
        return new TestModel(checkpoint, backend,
                new SingleSequence(model, new SingleSequence.Shape(contextLength, batchRows, logitRows)));
    }

    /** The loaded model, shared by every sequence run on it. */
    public DecoderModel model() {
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
