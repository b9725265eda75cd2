package fs.backend.cpu;

import fs.backend.KvCacheType;
import fs.format.RowQuantizers;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * One kv head's row of values, or key in its block (see {@link CpuKvCache}), as a {@link KvCacheType} stores it,
 * written from floats and read back as floats. The roundings are ggml's, so a cache holds what llama.cpp's holds: f16 to nearest even, bf16 to nearest
 * even (a NaN kept quiet), q8_0 as quantize_row_q8_0_ref (fs.format's Q8_0 quantizer).
 */
final class KvRows {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int Q8_0_BLOCK = DType.Q8_0.blockElements(), Q8_0_BYTES = DType.Q8_0.blockBytes();

    private KvRows() {}

    /** Stores the value row x[0..n) as {@code type} at byte {@code offset} of {@code dst}. */
    static void storeValue(KvCacheType type, float[] x, int n, MemorySegment dst, long offset) {
        switch (type) {
            case F32 -> MemorySegment.copy(x, 0, dst, MatmulKernels.FLOAT, offset, n);
            case F16 -> {
                for (int i = 0; i < n; i++) dst.set(SHORT, offset + 2L * i, Float.floatToFloat16(x[i]));
            }
            case BF16 -> {
                for (int i = 0; i < n; i++) dst.set(SHORT, offset + 2L * i, bf16(x[i]));
            }
            case Q8_0 -> RowQuantizers.of(DType.Q8_0).quantize(x, 1, n, null, dst, offset);
        }
    }

    /**
     * Stores x[0..n) as key {@code j} of the key block at byte {@code block} of {@code dst} (CpuKvCache's blocks of
     * 16 positions, dimension-major; q8_0: per 32 dimensions the 16 scales, then per dimension 16 int8).
     */
    static void storeKey(KvCacheType type, float[] x, int n, MemorySegment dst, long block, int j) {
        int positions = CpuKvCache.TYPED_KEY_BLOCK;
        switch (type) {
            case F32 -> {
                for (int d = 0; d < n; d++) dst.set(MatmulKernels.FLOAT, block + 4L * (d * positions + j), x[d]);
            }
            case F16 -> {
                for (int d = 0; d < n; d++) dst.set(SHORT, block + 2L * (d * positions + j), Float.floatToFloat16(x[d]));
            }
            case BF16 -> {
                for (int d = 0; d < n; d++) dst.set(SHORT, block + 2L * (d * positions + j), bf16(x[d]));
            }
            case Q8_0 -> {
                byte[] row = new byte[(int) type.rowBytes(n)];
                RowQuantizers.of(DType.Q8_0).quantize(x, 1, n, null,
                        MemorySegment.ofArray(row), 0);
                for (int b = 0; b < n / Q8_0_BLOCK; b++) {
                    long part = block + (long) b * positions * Q8_0_BYTES;
                    dst.set(ValueLayout.JAVA_BYTE, part + 2L * j, row[b * Q8_0_BYTES]);
                    dst.set(ValueLayout.JAVA_BYTE, part + 2L * j + 1, row[b * Q8_0_BYTES + 1]);
                    for (int t = 0; t < Q8_0_BLOCK; t++) {
                        dst.set(ValueLayout.JAVA_BYTE, part + 2L * positions + (long) t * positions + j,
                                row[b * Q8_0_BYTES + 2 + t]);
                    }
                }
            }
        }
    }

    /**
     * Reads the key block at byte {@code block} of {@code src} (keys of n elements) into kt[d·16 + j], dimension d of
     * key j; {@code bits} is scratch of 16·n shorts, {@code bytes} of a block's q8_0 bytes.
     */
    static void loadKeyBlock(KvCacheType type, MemorySegment src, long block, int n, float[] kt, short[] bits,
                             byte[] bytes) {
        int positions = CpuKvCache.TYPED_KEY_BLOCK, count = n * positions;
        switch (type) {
            case F32 -> MemorySegment.copy(src, MatmulKernels.FLOAT, block, kt, 0, count);
            case F16 -> {
                MemorySegment.copy(src, SHORT, block, bits, 0, count);
                for (int i = 0; i < count; i++) kt[i] = Float.float16ToFloat(bits[i]);
            }
            case BF16 -> {
                MemorySegment.copy(src, SHORT, block, bits, 0, count);
                for (int i = 0; i < count; i++) kt[i] = Float.intBitsToFloat(bits[i] << 16);
            }
            case Q8_0 -> {
                int partBytes = positions * Q8_0_BYTES;
                MemorySegment.copy(src, ValueLayout.JAVA_BYTE, block, bytes, 0, n / Q8_0_BLOCK * partBytes);
                for (int b = 0; b < n / Q8_0_BLOCK; b++) {
                    int part = b * partBytes;
                    for (int j = 0; j < positions; j++) {
                        float d = Float.float16ToFloat(
                                (short) ((bytes[part + 2 * j] & 0xff) | bytes[part + 2 * j + 1] << 8));
                        for (int t = 0; t < Q8_0_BLOCK; t++) {
                            kt[(b * Q8_0_BLOCK + t) * positions + j] = bytes[part + 2 * positions + t * positions + j] * d;
                        }
                    }
                }
            }
        }
    }

    /**
     * Reads the value row of n elements at byte {@code offset} of {@code src} into out[0..n); {@code bits} is scratch of n
     * shorts, {@code bytes} of a q8_0 row's bytes.
     */
    static void loadValue(KvCacheType type, MemorySegment src, long offset, int n, float[] out, short[] bits,
                     byte[] bytes) {
        switch (type) {
            case F32 -> MemorySegment.copy(src, MatmulKernels.FLOAT, offset, out, 0, n);
            case F16 -> {
                MemorySegment.copy(src, SHORT, offset, bits, 0, n);
                for (int i = 0; i < n; i++) out[i] = Float.float16ToFloat(bits[i]);
            }
            case BF16 -> {
                MemorySegment.copy(src, SHORT, offset, bits, 0, n);
                for (int i = 0; i < n; i++) out[i] = Float.intBitsToFloat(bits[i] << 16);
            }
            case Q8_0 -> {
                int blocks = n / Q8_0_BLOCK;
                MemorySegment.copy(src, ValueLayout.JAVA_BYTE, offset, bytes, 0, blocks * Q8_0_BYTES);
                for (int b = 0; b < blocks; b++) {
                    int o = b * Q8_0_BYTES;
                    float d = Float.float16ToFloat((short) ((bytes[o] & 0xff) | bytes[o + 1] << 8));
                    for (int j = 0; j < Q8_0_BLOCK; j++) out[b * Q8_0_BLOCK + j] = bytes[o + 2 + j] * d;
                }
            }
        }
    }

    /** ggml's fp32_to_bf16: the top half of the float rounded to nearest even; a NaN stays a quiet NaN. */
    static short bf16(float x) {
        int u = Float.floatToRawIntBits(x);
        if ((u & 0x7fffffff) > 0x7f800000) return (short) ((u >>> 16) | 64);
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }
}
