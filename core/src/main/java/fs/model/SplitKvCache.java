package fs.model;

import fs.backend.KvCache;
import fs.backend.KvCacheTypes;
import java.util.List;

/**
 * The KV cache of a model whose layers' attention runs on more than one backend: a cache on each of them, holding the
 * layers it runs, in layer order ({@link DecoderModel} knows which part and which of its layers a layer is). Every
 * part has the same sequences, context and types.
 */
record SplitKvCache(List<KvCache> parts, int layers) implements KvCache {
    SplitKvCache {
        parts = List.copyOf(parts);
    }

    @Override
    public int sequences() {
        return parts.getFirst().sequences();
    }

    @Override
    public int contextLength() {
        return parts.getFirst().contextLength();
    }

    @Override
    public int kvHeads() {
        return parts.getFirst().kvHeads();
    }

    @Override
    public int headDim() {
        return parts.getFirst().headDim();
    }

    @Override
    public KvCacheTypes types() {
        return parts.getFirst().types();
    }
}
