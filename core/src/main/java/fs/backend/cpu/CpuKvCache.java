package fs.backend.cpu;

import fs.backend.KvCache;
import fs.backend.KvCacheType;
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
 * values as rows of their type, [sequence][kvHead][position][row of headDim elements], and keys, for the same reason
 * as above, in blocks of {@link #TYPED_KEY_BLOCK} positions, dimension-major: [sequence][kvHead][block][headDim][16]
 * elements of their type (q8_0: per 32 dimensions, the 16 keys' scales, then per dimension their 16 int8). That is
 * what {@link ChunkedAttention} reads; {@link KvRows} writes and reads both.
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

    /** Positions per key block of a cache of other types than f32: one 512-bit vector of floats. */
    static final int TYPED_KEY_BLOCK = 16;

    /** Bytes of a layer's keys stored as {@code type} in blocks of {@link #TYPED_KEY_BLOCK} positions. */
    static long typedKeyBytes(int sequences, int contextLength, int kvHeads, int headDim, KvCacheType type) {
        long blocks = (contextLength + TYPED_KEY_BLOCK - 1) / TYPED_KEY_BLOCK;
        return (long) sequences * kvHeads * blocks * TYPED_KEY_BLOCK * type.rowBytes(headDim);
    }

    /** Byte offset of key block {@code block} of a sequence's kv head in a layer's keys of another type than f32. */
    long typedKeyBlockOffset(int sequence, int kvHead, int block) {
        long blocks = (contextLength + TYPED_KEY_BLOCK - 1) / TYPED_KEY_BLOCK;
        return (((long) sequence * kvHeads + kvHead) * blocks + block) * TYPED_KEY_BLOCK
                * types.keys().rowBytes(headDim);
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
