package fs.backend.cpu;

import fs.backend.KvCache;
import java.lang.foreign.MemorySegment;

/**
 * Keys and values of a {@link VectorBackend}: per layer one segment each, laid out [kvHead][position][headDim] so
 * that attention streams one head's keys (and values) contiguously.
 */
record CpuKvCache(VectorBackend owner, int layers, int contextLength, int kvHeads, int headDim,
                  MemorySegment[] keys, MemorySegment[] values) implements KvCache {

    /** Byte offset of (kvHead, position) in a layer's segment. */
    long offset(int kvHead, int position) {
        return ((long) kvHead * contextLength + position) * headDim * Float.BYTES;
    }
}
