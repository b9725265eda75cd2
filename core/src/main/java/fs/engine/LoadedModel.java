package fs.engine;

import fs.backend.Backend;
import fs.backend.KvCacheTypes;
import fs.backend.opencl.OpenClBackend;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.model.Placement;
import fs.source.ModelSource;

/**
 * A model {@link Engine#load} made ready to run, and what keeps it alive: its source, whose tensors stay mapped
 * (weights may be read from them directly), the model on the backends that own its buffers (its placement's),
 * {@code description}, where it runs as the user reads it, the context length and the KV cache's types the engine
 * settled on, and {@code state}, what the caller runs on it (a sequence, a scheduler), allocated on the same backends
 * with those types.
 * Closing frees the backends and unmaps the source; the caller ends what runs in {@code state} first (a scheduler's
 * thread).
 */
public record LoadedModel<S>(ModelSource source, DecoderModel model, String description, int contextLength,
                             KvCacheTypes cacheTypes, S state) implements AutoCloseable {

    public ModelConfig config() {
        return model.config();
    }

    /** Bytes of KV cache one position of one sequence takes: the keys and values of every layer's kv heads. */
    public long cacheBytesPerPosition() {
        ModelConfig config = config();
        return cacheTypes.bytesPerPosition(config.numHiddenLayers(), config.numKeyValueHeads(), config.headDim());
    }

    /**
     * The layers the OpenCL device runs, counted as -ngl and llama-bench's n_gpu_layers count them: its layers, and
     * one more when it runs the output; 0 on the CPU alone.
     */
    public int gpuLayers() {
        Placement placement = model.placement();
        long layers = placement.layers().stream().filter(l -> l.attention() instanceof OpenClBackend).count();
        return (int) layers + (placement.output() instanceof OpenClBackend ? 1 : 0);
    }

    /** Returns when the uploads' background work on every backend is done ({@link Backend#awaitUploads}). */
    public void awaitUploads() {
        for (Backend backend : model.placement().backends()) backend.awaitUploads();
    }

    @Override
    public void close() {
        try {
            Engine.closeAll(model.placement().backends());
        } finally {
            source.close();
        }
    }
}
