package fs.engine;

import fs.backend.Backend;
import fs.backend.KvCacheTypes;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.source.ModelSource;

/**
 * A model {@link Engine#load} made ready to run, and what keeps it alive: its source, whose tensors stay mapped
 * (weights may be read from them directly), the backend that owns its buffers, the context length and the KV cache's
 * types the engine settled on, and {@code state}, what the caller runs on it (a sequence, a scheduler), allocated on
 * the same backend with those types.
 * Closing frees the backend and unmaps the source; the caller ends what runs in {@code state} first (a scheduler's
 * thread).
 */
public record LoadedModel<S>(ModelSource source, Backend backend, DecoderModel model, int contextLength,
                             KvCacheTypes cacheTypes, S state) implements AutoCloseable {

    public ModelConfig config() {
        return model.config();
    }

    /** Bytes of KV cache one position of one sequence takes: the keys and values of every layer's kv heads. */
    public long cacheBytesPerPosition() {
        ModelConfig config = config();
        return cacheTypes.bytesPerPosition(config.numHiddenLayers(), config.numKeyValueHeads(), config.headDim());
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
