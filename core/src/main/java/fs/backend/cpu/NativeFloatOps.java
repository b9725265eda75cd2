package fs.backend.cpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import fs.FsException;
import fs.backend.KvCacheType;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * One variant of libfscpu's float operations (native/cpu/float_ops.c: rmsnorm, rope, silu·mul, add), which give the
 * very floats of {@link VectorBackend}'s Java kernels at 16 lanes (attention at the Java kernels' own lanes). They exist for time, not for other results: until
 * C2 has compiled the Java kernels they run interpreted, and on a first token or a small model that is most of the
 * time. Critical downcalls (heap segments allowed), each bounded by one op's rows; every call is checked here against
 * the segments' sizes.
 */
@SuppressWarnings("restricted") // downcalls into libfscpu
final class NativeFloatOps {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CRITICAL = Linker.Option.critical(true);

    private final MethodHandle rmsNorm;
    private final MethodHandle rope;
    private final MethodHandle siluMul;
    private final MethodHandle add;
    private final MethodHandle attention;
    private final MethodHandle storeKey;
    private final MethodHandle attentionChunk;
    private final MethodHandle argmax;

    NativeFloatOps(SymbolLookup library, String isa) {
        rmsNorm = handle(library, "fs_rms_norm_" + isa,
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_FLOAT));
        rope = handle(library, "fs_rope_" + isa,
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        siluMul = handle(library, "fs_silu_mul_" + isa, FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
        add = handle(library, "fs_add_" + isa, FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG));
        attention = handle(library, "fs_attention_" + isa, FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS,
                JAVA_INT, JAVA_INT, JAVA_INT, JAVA_FLOAT, ADDRESS, ADDRESS));
        storeKey = handle(library, "fs_store_key_" + isa, FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT));
        attentionChunk = handle(library, "fs_attention_chunk_" + isa, FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT,
                ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_FLOAT, ADDRESS,
                JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        argmax = handle(library, "fs_argmax_" + isa, FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG));
    }

    private static MethodHandle handle(SymbolLookup library, String name, FunctionDescriptor descriptor) {
        MemorySegment symbol = library.find(name).orElseThrow(
                () -> new FsException("the native CPU kernels have no " + name + " (a library from another build?)"));
        return LINKER.downcallHandle(symbol, descriptor, CRITICAL);
    }

    private static void require(boolean ok, String op) {
        if (!ok) throw new IllegalArgumentException("bad native " + op + " arguments");
    }

    /** {@code rows} rows of {@code width} floats of x, each scaled to unit root mean square (+ eps) and by gamma. */
    void rmsNorm(MemorySegment x, MemorySegment gamma, MemorySegment out, int rows, int width, float eps) {
        long bytes = (long) rows * width * Float.BYTES;
        require(rows >= 0 && width > 0 && x.byteSize() >= bytes && out.byteSize() >= bytes
                && gamma.byteSize() >= (long) width * Float.BYTES, "rmsNorm");
        try {
            rmsNorm.invokeExact(x, gamma, out, rows, width, eps);
        } catch (Throwable e) {
            throw new IllegalStateException("native rmsNorm failed", e);
        }
    }

    /**
     * One row of {@code heads} heads of {@code headDim} floats at {@code x}, rotated in place by the angles whose
     * cosines and sines start at {@code cos[from]} and {@code sin[from]} (headDim / 2 of each).
     */
    void rope(MemorySegment x, int heads, int headDim, float[] cos, float[] sin, int from) {
        int half = headDim / 2;
        require(heads >= 0 && headDim > 0 && headDim % 2 == 0 && x.byteSize() >= (long) heads * headDim * Float.BYTES
                && from >= 0 && from + half <= cos.length && from + half <= sin.length, "rope");
        try {
            rope.invokeExact(x, heads, headDim, MemorySegment.ofArray(cos).asSlice(4L * from),
                    MemorySegment.ofArray(sin).asSlice(4L * from));
        } catch (Throwable e) {
            throw new IllegalStateException("native rope failed", e);
        }
    }

    /** {@code out = silu(gate) · up} over {@code count} floats. */
    void siluMul(MemorySegment gate, MemorySegment up, MemorySegment out, long count) {
        long bytes = count * Float.BYTES;
        require(count >= 0 && gate.byteSize() >= bytes && up.byteSize() >= bytes && out.byteSize() >= bytes, "siluMul");
        try {
            siluMul.invokeExact(gate, up, out, count);
        } catch (Throwable e) {
            throw new IllegalStateException("native siluMul failed", e);
        }
    }

    /** {@code x += y} over {@code count} floats. */
    void add(MemorySegment x, MemorySegment y, long count) {
        long bytes = count * Float.BYTES;
        require(count >= 0 && x.byteSize() >= bytes && y.byteSize() >= bytes, "add");
        try {
            add.invokeExact(x, y, count);
        } catch (Throwable e) {
            throw new IllegalStateException("native add failed", e);
        }
    }

    /**
     * One query's attention ({@code headDim} floats at {@code q}) over positions 0 until {@code seen} of one kv head:
     * its keys in blocks of {@code keyBlock} positions from {@code keys} (CpuKvCache's layout), its values from
     * {@code values}; the weighted values into {@code out}. {@code scores} is scratch of {@code seen} rounded up to
     * whole blocks.
     */
    void attention(MemorySegment q, MemorySegment keys, MemorySegment values, int headDim, int keyBlock, int seen,
                   float scale, float[] scores, MemorySegment out) {
        long blocks = (seen + keyBlock - 1) / keyBlock, row = (long) headDim * Float.BYTES;
        require(headDim > 0 && keyBlock >= 1 && keyBlock <= 16 && seen >= 1 && q.byteSize() >= row
                && out.byteSize() >= row && keys.byteSize() >= blocks * keyBlock * row
                && values.byteSize() >= seen * row && scores.length >= blocks * keyBlock, "attention");
        try {
            attention.invokeExact(q, keys, values, headDim, keyBlock, seen, scale, MemorySegment.ofArray(scores), out);
        } catch (Throwable e) {
            throw new IllegalStateException("native attention failed", e);
        }
    }

    /** One key row ({@code headDim} floats at {@code k}) into its block: dimension d at {@code dst} + d·keyBlock. */
    void storeKey(MemorySegment k, MemorySegment dst, int headDim, int keyBlock) {
        require(headDim > 0 && keyBlock >= 1 && k.byteSize() >= (long) headDim * Float.BYTES
                && dst.byteSize() >= ((long) (headDim - 1) * keyBlock + 1) * Float.BYTES, "storeKey");
        try {
            storeKey.invokeExact(k, dst, headDim, keyBlock);
        } catch (Throwable e) {
            throw new IllegalStateException("native storeKey failed", e);
        }
    }

    /**
     * {@link ChunkedAttention}'s chunk: {@code count} queries of {@code headDim} floats at {@code q}, query i seeing
     * positions below {@code seen[i]}, over positions {@code from} until {@code to} of one kv head's key blocks at
     * {@code keys} and value rows at {@code values} (of their types, CpuKvCache's layout); query i's partial m, l to {@code m[at + i]}, {@code l[at + i]}
     * and o to {@code o[(at + i)·headDim..]}. {@code scores} is scratch of count rows of {@link ChunkedAttention#CHUNK}.
     */
    void attentionChunk(float[] q, int count, int[] seen, MemorySegment keys, MemorySegment values,
                        KvCacheType keyType, KvCacheType valueType, int headDim, int from, int to, float scale,
                        float[] scores, float[] m, float[] l, float[] o, int at) {
        int stride = ChunkedAttention.CHUNK;
        require(count >= 1 && headDim > 0 && headDim <= ChunkedAttention.MOST_HEAD_DIM && keyType.fits(headDim)
                && valueType.fits(headDim) && from >= 0 && to - from <= stride && q.length >= count * headDim
                && from % CpuKvCache.TYPED_KEY_BLOCK == 0 && seen.length >= count
                && keys.byteSize() >= CpuKvCache.typedKeyBytes(1, to, 1, headDim, keyType)
                && values.byteSize() >= to * valueType.rowBytes(headDim) && scores.length >= count * stride
                && at >= 0 && m.length >= at + count && l.length >= at + count
                && o.length >= (long) (at + count) * headDim, "attentionChunk");
        try {
            attentionChunk.invokeExact(MemorySegment.ofArray(q), count, MemorySegment.ofArray(seen), keys, values,
                    keyType.ordinal(), valueType.ordinal(), headDim, from, to, scale, MemorySegment.ofArray(scores),
                    stride, MemorySegment.ofArray(m).asSlice(4L * at), MemorySegment.ofArray(l).asSlice(4L * at),
                    MemorySegment.ofArray(o).asSlice(4L * at * headDim));
        } catch (Throwable e) {
            throw new IllegalStateException("native attentionChunk failed", e);
        }
    }

    /** The index of the first largest of {@code count} floats (the logits hold no NaN). */
    int argmax(MemorySegment x, int count) {
        require(count >= 1 && x.byteSize() >= (long) count * Float.BYTES, "argmax");
        try {
            return (int) (long) argmax.invokeExact(x, (long) count);
        } catch (Throwable e) {
            throw new IllegalStateException("native argmax failed", e);
        }
    }
}
