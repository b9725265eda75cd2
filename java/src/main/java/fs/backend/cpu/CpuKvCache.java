package fs.backend.cpu;

import fs.backend.KvCache;
import java.lang.foreign.MemorySegment;

/**
 * Keys and values of a {@link VectorBackend}: per layer one segment each.
 *
 * <p>Values are laid out [kvHead][position][headDim]: attention weighs whole value rows, each a few vectors.
 * Keys are laid out in blocks of {@link #KEY_BLOCK} positions, [kvHead][block][headDim][position in block]: one vector
 * then holds a dimension of a block's keys, so a query's scores come out a vector per block, each the sequential FMA
 * chain over the dimensions, with no sum of lanes (which cost more than the FMAs when a head is 128 wide).
 */
record CpuKvCache(VectorBackend owner, int layers, int contextLength, int kvHeads, int headDim,
                  MemorySegment[] keys, MemorySegment[] values) implements KvCache {

    /** Positions per key block: one vector of floats. */
    static final int KEY_BLOCK = MatmulKernels.L;

    /** Key blocks per head: the context rounded up to whole blocks. */
    static int keyBlocks(int contextLength) {
        return (contextLength + KEY_BLOCK - 1) / KEY_BLOCK;
    }

    /** Bytes of a layer's keys. */
    static long keyBytes(int contextLength, int kvHeads, int headDim) {
        return (long) kvHeads * keyBlocks(contextLength) * headDim * KEY_BLOCK * Float.BYTES;
    }

    /** Byte offset of (kvHead, position) in a layer's values. */
    long valueOffset(int kvHead, int position) {
        return ((long) kvHead * contextLength + position) * headDim * Float.BYTES;
    }

    /** Byte offset of dimension 0 of key block {@code block} of a kv head; dimension d is d·KEY_BLOCK floats on. */
    long keyBlockOffset(int kvHead, int block) {
        return ((long) kvHead * keyBlocks(contextLength) + block) * headDim * KEY_BLOCK * Float.BYTES;
    }
}
