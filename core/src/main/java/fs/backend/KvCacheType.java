package fs.backend;

import fs.FsException;
import fs.tensor.DType;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The element type of a KV cache's keys or of its values, named as llama.cpp's {@code --cache-type-k/-v} name them.
 * q8_0 stores blocks of 32 elements of a head as ggml's Q8_0 (one f16 scale, 32 int8), so it needs a head dimension
 * that is a multiple of 32, as llama.cpp's does.
 */
public enum KvCacheType {
    F32(DType.F32),
    F16(DType.F16),
    BF16(DType.BF16),
    Q8_0(DType.Q8_0);

    private final DType storage;

    KvCacheType(DType storage) {
        this.storage = storage;
    }

    /** How an element (or block) is stored: the row geometry and rounding of this type. */
    public DType storage() {
        return storage;
    }

    /** The name on the command line and in tables: f32, f16, bf16, q8_0. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Bytes of one head's row of {@code headDim} elements. */
    public long rowBytes(int headDim) {
        return storage.rowBytes(headDim);
    }

    /** Whether a head of {@code headDim} elements is whole blocks of this type. */
    public boolean fits(int headDim) {
        return headDim % storage.blockElements() == 0;
    }

    /** The type named {@code name} (case-insensitive); an unknown name is one line listing the types. */
    public static KvCacheType parse(String name) {
        for (KvCacheType type : values()) {
            if (type.label().equalsIgnoreCase(name.trim())) return type;
        }
        throw new FsException("unknown KV cache type '" + name + "': use one of " + labels());
    }

    /** "f32, f16, bf16, q8_0". */
    public static String labels() {
        return Arrays.stream(values()).map(KvCacheType::label).collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return label();
    }
}
