package fs.backend;

import fs.FsException;

/** The types of a KV cache's keys and of its values (llama.cpp's {@code -ctk} and {@code -ctv}). */
public record KvCacheTypes(KvCacheType keys, KvCacheType values) {
    /** Float32 keys and values: the exact cache, which the oracle and the golden tests use. */
    public static final KvCacheTypes F32 = new KvCacheTypes(KvCacheType.F32, KvCacheType.F32);
    /** f16 keys and values: llama.cpp's default, half of f32's bytes. */
    public static final KvCacheTypes F16 = new KvCacheTypes(KvCacheType.F16, KvCacheType.F16);

    public KvCacheTypes {
        if (keys == null || values == null) throw new NullPointerException("a KV cache type is null");
    }

    /** Both types, checked against a head of {@code headDim}: q8_0 needs whole blocks of 32. */
    public KvCacheTypes checkedFor(int headDim) {
        for (KvCacheType type : new KvCacheType[] {keys, values}) {
            if (!type.fits(headDim)) {
                throw new FsException("a " + type + " KV cache needs a head dimension that is a multiple of "
                        + type.storage().blockElements() + "; this model's is " + headDim + " (use f32, f16 or bf16)");
            }
        }
        return this;
    }

    /** Bytes the cache takes per position of one sequence: keys and values of every layer and kv head. */
    public long bytesPerPosition(int layers, int kvHeads, int headDim) {
        return (long) layers * kvHeads * (keys.rowBytes(headDim) + values.rowBytes(headDim));
    }

    /** "f16" when both are the same type, else "k q8_0, v f16". */
    @Override
    public String toString() {
        return keys == values ? keys.label() : "k " + keys.label() + ", v " + values.label();
    }
}
