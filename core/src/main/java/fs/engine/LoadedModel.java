package fs.engine;

import fs.backend.Backend;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.source.ModelSource;

/**
 * A model {@link Engine#load} made ready to run, and what keeps it alive: its source, whose tensors stay mapped
 * (weights may be read from them directly), the backend that owns its buffers, the context length the engine settled
 * on, and {@code state}, what the caller runs on it (a sequence, a scheduler), allocated on the same backend.
 * Closing frees the backend and unmaps the source; the caller ends what runs in {@code state} first (a scheduler's
 * thread).
 */
public record LoadedModel<S>(ModelSource source, Backend backend, DecoderModel model, int contextLength, S state)
        implements AutoCloseable {

    public ModelConfig config() {
        return model.config();
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
