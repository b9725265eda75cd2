package fs.cli;

import fs.FsException;
import fs.backend.Backend;
import fs.generate.GenerationConfig;
import fs.generate.Generator;
import fs.model.Qwen3Model;
import fs.model.SingleSequence;
import fs.source.ModelSource;

/**
 * A model ready to run and what keeps it alive: its source, whose tensors stay mapped (weights may be read from them
 * directly), and the backend that owns its buffers; {@code sequence} is the one sequence the command runs on it
 * (commands that run several, as {@code fs bench --parallel}, make their own caches on {@code model}). Closing frees
 * both.
 */
record LoadedModel(ModelSource source, Backend backend, Qwen3Model model, SingleSequence sequence)
        implements AutoCloseable {

    GenerationConfig generationConfig() {
        return source.generationConfig();
    }

    /** The ids that end generation: the config's eos ids and generation_config.json's. */
    int[] stopIds() {
        return source.stopIds();
    }

    /** Throws the user-facing error for an id outside the vocabulary, naming the option it came from. */
    void checkTokenIds(int[] ids, String option) {
        int vocab = model.config().vocabSize();
        for (int id : ids) {
            if (id < 0 || id >= vocab) {
                throw new FsException(option + ": token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
            }
        }
    }

    /**
     * Throws {@link ModelFileChangedException} when a weights file was truncated or written to since it was mapped: the
     * mapping is shared, so the model would go on computing with other bytes (one stat() per file, microseconds).
     */
    void checkUnchanged() {
        source.changedFile().ifPresent(file -> {
            throw new ModelFileChangedException(file, null);
        });
    }

    /** {@code listener}, with the weights checked unchanged before each token reaches it. */
    Generator.TokenListener watching(Generator.TokenListener listener) {
        return id -> {
            checkUnchanged();
            listener.onToken(id);
        };
    }

    @Override
    public void close() {
        try {
            backend.close();
        } finally {
            source.close();
        }
    }
}
