package fs.bench;

import fs.backend.Backend;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Random bf16 weights shaped like Qwen3-0.6B's matmuls (28 layers of q, k, v, o, gate, up, down and the tied 151936 ×
 * 1024 lm_head, about 1.15 GB), off-heap like a mapped checkpoint. Values are normal floats of magnitude 2⁻⁸..2⁻¹ so
 * no denormal slows the FMAs down.
 */
final class Qwen3SizedWeights implements AutoCloseable {
    static final int HIDDEN = 1024, QUERY = 2048, KV = 1024, INTERMEDIATE = 3072, VOCAB = 151936, LAYERS = 28;
    /** [out, in] of each layer's projections in forward order: q, k, v, o, gate, up, down. */
    static final int[][] LAYER_SHAPES = {
        {QUERY, HIDDEN}, {KV, HIDDEN}, {KV, HIDDEN}, {HIDDEN, QUERY}, {INTERMEDIATE, HIDDEN}, {INTERMEDIATE, HIDDEN},
        {HIDDEN, INTERMEDIATE}
    };

    private final Arena arena = Arena.ofShared();
    final Weight[][] layers = new Weight[LAYERS][LAYER_SHAPES.length];
    final Weight lmHead;

    Qwen3SizedWeights(Backend backend) {
        this(backend, DType.BF16);
    }

    /** The weights in {@code dtype}: bf16 as above, or Q8_0 / Q4_0 blocks of random quants under scales near 2⁻⁸. */
    Qwen3SizedWeights(Backend backend, DType dtype) {
        long seed = 0x9E3779B97F4A7C15L;
        for (int l = 0; l < LAYERS; l++) {
            for (int p = 0; p < LAYER_SHAPES.length; p++) {
                layers[l][p] = backend.upload(random("layer" + l + "." + p, dtype, LAYER_SHAPES[p][0], LAYER_SHAPES[p][1],
                        seed++));
            }
        }
        lmHead = backend.upload(random("lm_head", dtype, VOCAB, HIDDEN, seed));
    }

    private Tensor random(String name, DType dtype, int rows, int columns, long seed) {
        long bytes = rows * dtype.rowBytes(columns);
        MemorySegment data = arena.allocate(bytes, 64);
        long state = seed | 1;
        if (dtype != DType.BF16) {
            for (long i = 0; i + 8 <= bytes; i += 8) {
                state ^= state << 13;
                state ^= state >>> 7;
                state ^= state << 17;
                data.set(ValueLayout.JAVA_LONG_UNALIGNED, i, state);
            }
            short scale = Float.floatToFloat16(0x1p-8f);
            for (long b = 0; b < bytes; b += dtype.blockBytes()) data.set(ValueLayout.JAVA_SHORT_UNALIGNED, b, scale);
            return new Tensor(name, dtype, new long[] {rows, columns}, data);
        }
        long count = (long) rows * columns;
        for (long i = 0; i < count; i += 4) {
            state ^= state << 13;
            state ^= state >>> 7;
            state ^= state << 17;
            // Each 16-bit lane: random sign and mantissa, exponent 119..126.
            long bits = (state & 0x807F807F807F807FL) | 0x3B803B803B803B80L | ((state >>> 3) & 0x0380038003800380L);
            data.set(ValueLayout.JAVA_LONG_UNALIGNED, 2 * i, bits);
        }
        return new Tensor(name, DType.BF16, new long[] {rows, columns}, data);
    }

    long parameterCount() {
        long n = (long) VOCAB * HIDDEN;
        for (int[] s : LAYER_SHAPES) n += (long) LAYERS * s[0] * s[1];
        return n;
    }

    @Override
    public void close() {
        arena.close();
    }
}
