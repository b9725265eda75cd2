package fs.backend.cpu;

import fs.backend.KvCache;
import fs.backend.KvCacheTypes;
import java.lang.foreign.MemorySegment;

/**
 * Keys and values of a {@link VectorBackend}: per layer one segment each, holding every sequence.
 *
 * <p>Values are laid out [sequence][kvHead][position][headDim]: attention weighs whole value rows, each a few vectors.
 * Keys are laid out in blocks of {@link #KEY_BLOCK} positions, [sequence][kvHead][block][headDim][position in block]:
 * one vector then holds a dimension of a block's keys, so a query's scores come out a vector per block, each the
 * sequential FMA chain over the dimensions, with no sum of lanes (which cost more than the FMAs when a head is 128
 * wide). A (sequence, kvHead) pair is one stream of positions, laid out as a kv head was before sequences existed.
 *
 * <p>That is the float32 cache (both types f32), which {@link CpuAttention} reads. A cache of any other types holds
 * keys and values alike as rows of their type, [sequence][kvHead][position][row of headDim elements], which
 * {@link ChunkedAttention} reads ({@link KvRows} writes and reads a row).
 */
record CpuKvCache(VectorBackend owner, int layers, int sequences, int contextLength, int kvHeads, int headDim,
                  KvCacheTypes types, MemorySegment[] keys, MemorySegment[] values) implements KvCache {

    /** Positions per key block: one vector of floats. */
    static final int KEY_BLOCK = MatmulKernels.L;

    /** Key blocks per head: the context rounded up to whole blocks. */
    static int keyBlocks(int contextLength) {
        return (contextLength + KEY_BLOCK - 1) / KEY_BLOCK;
    }

    /** Bytes of a layer's keys. */
    static long keyBytes(int sequences, int contextLength, int kvHeads, int headDim) {
        return (long) sequences * kvHeads * keyBlocks(contextLength) * headDim * KEY_BLOCK * Float.BYTES;
    }

    /** Whether this is the float32 cache of blocked keys; otherwise rows of {@link #types()}. */
    boolean float32() {
        return types.equals(KvCacheTypes.F32);
    }

    /** Byte offset of row (sequence, kvHead, position) in a layer's keys or values of rows of {@code rowBytes}. */
    long rowOffset(int sequence, int kvHead, int position, long rowBytes) {
        return (((long) sequence * kvHeads + kvHead) * contextLength + position) * rowBytes;
    }

    /** Byte offset of (sequence, kvHead, position) in a layer's float32 values. */
    long valueOffset(int sequence, int kvHead, int position) {
        return (((long) sequence * kvHeads + kvHead) * contextLength + position) * headDim * Float.BYTES;
    }

    /**
     * Byte offset of dimension 0 of key block {@code block} of a sequence's kv head; dimension d is d·KEY_BLOCK floats
     * on.
     */
    long keyBlockOffset(int sequence, int kvHead, int block) {
        return (((long) sequence * kvHeads + kvHead) * keyBlocks(contextLength) + block) * headDim * KEY_BLOCK
                * Float.BYTES;
    }
}
