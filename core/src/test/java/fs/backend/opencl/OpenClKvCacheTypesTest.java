package fs.backend.opencl;

import static fs.backend.opencl.OpenClTestSupport.random;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import fs.FsException;
import fs.backend.Backend;
import fs.backend.Buffer;
import fs.backend.KvCache;
import fs.backend.KvCacheType;
import fs.backend.KvCacheTypes;
import fs.backend.RowPositions;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The KV cache types on OpenCL, beyond fs.backend.EveryKvCacheTypeOnEveryBackendTest (which holds the device's own
 * design to the float64 attention): the bytes {@code store_<type>} writes are ggml's for the type, bit for bit, and the
 * GPU design's attention (forced on PoCL) reads every type as the CPU design's does.
 */
class OpenClKvCacheTypesTest {
    /** As OpenClBackendTest's: both designs sum in float32, in different orders, over the same stored values. */
    private static final double NMSE = 1e-7;
    private static final int KV_HEADS = 2, HEAD_DIM = 64, KV_DIM = KV_HEADS * HEAD_DIM;

    private static Arena arena;
    private static final Map<KernelDesign, OpenClBackend> backends = new EnumMap<>(KernelDesign.class);
    private static DeviceQueue reader;
    private final Random random = new Random(27);

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        for (KernelDesign design : KernelDesign.values()) {
            backends.put(design, new OpenClBackend(OpenClTestSupport.device(), design));
        }
        reader = new DeviceQueue(OpenClTestSupport.device());
    }

    @AfterAll
    static void stop() {
        backends.values().forEach(OpenClBackend::close);
        backends.clear();
        reader.close();
        arena.close();
    }

    /**
     * Keys of one type and values of the next (so that both stores and every type are checked), rows of plain,
     * subnormal-sized and tie-breaking values, and for the float types a row of NaNs and infinities (which q8_0's
     * block scale cannot hold), stored at positions 1.. of sequence 1 of layer 1: each head's row reads back as ggml's
     * rounding of it.
     */
    @Test
    void storesEveryTypeAsGgmlDoes() {
        OpenClBackend backend = backends.get(KernelDesign.CPU);
        KvCacheType[] types = KvCacheType.values();
        for (int t = 0; t < types.length; t++) {
            KvCacheTypes pair = new KvCacheTypes(types[t], types[(t + 1) % types.length]);
            List<float[]> rows = new ArrayList<>(List.of(random(random, KV_DIM), scaled(random(random, KV_DIM), 1e-6f),
                    ties()));
            if (pair.keys() != KvCacheType.Q8_0 && pair.values() != KvCacheType.Q8_0) rows.add(nonFinite());
            float[] x = new float[rows.size() * KV_DIM];
            for (int r = 0; r < rows.size(); r++) System.arraycopy(rows.get(r), 0, x, r * KV_DIM, KV_DIM);
            int sequences = 2, context = 8;
            var cache = (OpenClBackend.ClKvCache) backend.allocateKvCache(2, sequences, context, KV_HEADS, HEAD_DIM,
                    pair);
            Buffer stored = bitsInput(backend, x);
            backend.storeKv(cache, 1, stored, stored, RowPositions.run(1, 1, rows.size()));
            backend.read(stored, 0, new float[1]); // the queue has run the stores
            assertStored(pair.keys(), cache.keys().get(1), x, rows.size(), context, pair + " keys");
            assertStored(pair.values(), cache.values().get(1), x, rows.size(), context, pair + " values");
        }
    }

    private static void assertStored(KvCacheType type, OpenClBackend.ClBytes cache, float[] x, int rows, int context,
            String what) {
        byte[] bytes = reader.readBytes(cache, cache.bytes());
        long rowBytes = type.rowBytes(HEAD_DIM);
        for (int r = 0; r < rows; r++) {
            for (int h = 0; h < KV_HEADS; h++) {
                byte[] expected = ggmlRow(type, x, r * KV_DIM + h * HEAD_DIM, HEAD_DIM);
                int at = Math.toIntExact(((long) (context + 1 + r) * KV_HEADS + h) * rowBytes);
                byte[] actual = Arrays.copyOfRange(bytes, at, at + expected.length);
                boolean same = Arrays.equals(expected, actual)
                        || type == KvCacheType.F16 && sameHalvesOrNaNs(expected, actual);
                if (!same) {
                    fail(what + " as " + type + ", row " + r + " head " + h + ": " + Arrays.toString(actual)
                            + " instead of ggml's " + Arrays.toString(expected));
                }
            }
        }
    }

    /** Halves equal but for NaNs, whose payload IEEE leaves to the conversion (ggml's f16 has no rule for them). */
    private static boolean sameHalvesOrNaNs(byte[] expected, byte[] actual) {
        ByteBuffer e = ByteBuffer.wrap(expected).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer a = ByteBuffer.wrap(actual).order(ByteOrder.LITTLE_ENDIAN);
        while (e.hasRemaining()) {
            float ef = Float.float16ToFloat(e.getShort()), af = Float.float16ToFloat(a.getShort());
            if (!(Float.isNaN(ef) ? Float.isNaN(af) : Float.floatToRawIntBits(ef) == Float.floatToRawIntBits(af))) {
                return false;
            }
        }
        return true;
    }

    /** A head's row of {@code length} elements from x[at..] as ggml stores it as {@code type}. */
    private static byte[] ggmlRow(KvCacheType type, float[] x, int at, int length) {
        ByteBuffer row = ByteBuffer.allocate(Math.toIntExact(type.rowBytes(length))).order(ByteOrder.LITTLE_ENDIAN);
        switch (type) {
            case F32 -> {
                for (int i = 0; i < length; i++) row.putInt(Float.floatToRawIntBits(x[at + i]));
            }
            case F16 -> {
                for (int i = 0; i < length; i++) row.putShort(Float.floatToFloat16(x[at + i]));
            }
            case BF16 -> {
                for (int i = 0; i < length; i++) {
                    int u = Float.floatToRawIntBits(x[at + i]);
                    row.putShort((short) ((u & 0x7fffffff) > 0x7f800000 ? (u >>> 16) | 64
                            : (u + (0x7fff + ((u >>> 16) & 1))) >>> 16));
                }
            }
            case Q8_0 -> {
                for (int b = at; b < at + length; b += 32) {
                    float amax = 0;
                    for (int i = b; i < b + 32; i++) amax = Math.max(amax, Math.abs(x[i]));
                    float d = amax / 127;
                    float id = d != 0 ? 1 / d : 0;
                    row.putShort(Float.floatToFloat16(d));
                    for (int i = b; i < b + 32; i++) {
                        float q = x[i] * id;
                        row.put((byte) Math.copySign(Math.floor(Math.abs((double) q) + 0.5), q)); // roundf
                    }
                }
            }
        }
        return row.array();
    }

    private static float[] scaled(float[] x, float factor) {
        for (int i = 0; i < x.length; i++) x[i] *= factor;
        return x;
    }

    /**
     * Values on rounding's edges, a block of 32 each. The first block's largest is 127, so that q8_0's d is 1 and its
     * halves are ties, to round away from zero; it also holds ties between two f16s and between two bf16s (to the
     * even one). The second is zeros (q8_0's d is 0). The third holds f16's largest, what rounds to it and to
     * infinity, and ties between its subnormals.
     */
    private float[] ties() {
        float[] x = random(random, KV_DIM);
        float[] q8_0Ties = {127, 2.5f, -2.5f, 0.5f, -0.5f, 126.5f, 1 + 0x1p-11f, 1 + 3 * 0x1p-11f, -(1 + 0x1p-11f),
            1 + 0x1p-8f, 1 + 3 * 0x1p-8f, -(1 + 3 * 0x1p-8f)};
        System.arraycopy(q8_0Ties, 0, x, 0, q8_0Ties.length);
        Arrays.fill(x, 32, 64, 0f);
        float[] halfEdges = {65504, 65519.996f, -65520, 1e5f, 0x1p-25f, 0x1p-24f * 1.5f, -0x1p-24f * 2.5f};
        System.arraycopy(halfEdges, 0, x, 64, halfEdges.length);
        return x;
    }

    /** NaNs, one whose rounding would carry it to infinity and a signalling one, infinities and float's extremes. */
    private float[] nonFinite() {
        float[] x = random(random, KV_DIM);
        float[] edges = {Float.intBitsToFloat(0x7fffffff), Float.intBitsToFloat(0xff800001), Float.POSITIVE_INFINITY,
            Float.NEGATIVE_INFINITY, Float.MAX_VALUE, -Float.MAX_VALUE, Float.MIN_VALUE, Float.MIN_NORMAL};
        System.arraycopy(edges, 0, x, 0, edges.length);
        return x;
    }

    /**
     * Both designs over a cache of each type pair, GQA rows after hundreds of cached positions, a decode row of
     * Qwen3-0.6B's shape, three blocks of q8_0 per head, and (for the types without blocks) a head_dim that is no
     * multiple of 8: the GPU design's attention is the CPU design's up to the order of float32 sums.
     */
    @Test
    void theGpuDesignAttendsOverEveryTypeAsTheCpuDesign() {
        List<KvCacheTypes> pairs = new ArrayList<>();
        for (KvCacheType type : KvCacheType.values()) pairs.add(new KvCacheTypes(type, type));
        pairs.add(new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F16));
        pairs.add(new KvCacheTypes(KvCacheType.BF16, KvCacheType.Q8_0));
        // (heads, kvHeads, headDim, startPos, rows)
        int[][] shapes = {{6, 2, 64, 300, 5}, {16, 8, 128, 437, 1}, {8, 1, 96, 129, 3}, {4, 2, 20, 33, 2}};
        int context = 480;
        for (int[] shape : shapes) {
            int heads = shape[0], kvHeads = shape[1], headDim = shape[2], startPos = shape[3], rows = shape[4];
            int kvDim = kvHeads * headDim;
            float[] earlierKeys = scaled(random(random, startPos * kvDim), 2.5f);
            float[] earlierValues = random(random, startPos * kvDim);
            float[] keys = scaled(random(random, rows * kvDim), 2.5f);
            float[] values = random(random, rows * kvDim);
            float[] q = random(random, rows * heads * headDim);
            for (KvCacheTypes pair : pairs) {
                if (!pair.keys().fits(headDim) || !pair.values().fits(headDim)) continue;
                float[][] out = new float[2][];
                for (KernelDesign design : KernelDesign.values()) {
                    Backend backend = backends.get(design);
                    KvCache cache = backend.allocateKvCache(1, 1, context, kvHeads, headDim, pair);
                    backend.storeKv(cache, 0, input(backend, earlierKeys), input(backend, earlierValues),
                            RowPositions.run(0, 0, startPos));
                    RowPositions placed = RowPositions.run(0, startPos, rows);
                    backend.storeKv(cache, 0, input(backend, keys), input(backend, values), placed);
                    Buffer result = backend.allocate(q.length);
                    backend.attention(input(backend, q), cache, 0, result, placed, heads);
                    out[design.ordinal()] = new float[q.length];
                    backend.read(result, 0, out[design.ordinal()]);
                }
                OpenClTestSupport.assertNmse(out[KernelDesign.CPU.ordinal()], out[KernelDesign.GPU.ordinal()], NMSE,
                        pair + " cache, " + heads + "/" + kvHeads + " heads of " + headDim + ", " + rows
                                + " rows at " + startPos);
            }
        }
    }

    /** A cache that does not fit says which buffer, of which type, in the device's words. */
    @Test
    void aCacheTooLargeForTheDeviceNamesItsType() {
        OpenClBackend backend = backends.get(KernelDesign.CPU);
        FsException e = assertThrows(FsException.class, () -> backend.allocateKvCache(1, 1, 1 << 28, 8, 128,
                new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F16)));
        assertTrue(e.getMessage().startsWith("KV cache (keys of layer 0 as q8_0, --ctx 268435456) needs "),
                e.getMessage());
    }

    /** A buffer holding {@code values}: embed of token 0 from a one-row F32 table is a plain copy on any backend. */
    private static Buffer input(Backend backend, float[] values) {
        Weight staging = backend.upload(OpenClTestSupport.tensor("x", DType.F32, values, arena, 1, values.length));
        Buffer buffer = backend.allocate(values.length);
        backend.embed(staging, new int[] {0}, buffer);
        return buffer;
    }

    /** As {@link #input}, the floats' bits written as ints, so that a signalling NaN arrives as it is. */
    private static Buffer bitsInput(Backend backend, float[] values) {
        MemorySegment table = arena.allocate((long) values.length * Float.BYTES, 16);
        for (int i = 0; i < values.length; i++) {
            table.setAtIndex(ValueLayout.JAVA_INT, i, Float.floatToRawIntBits(values[i]));
        }
        Weight staging = backend.upload(new Tensor("x", DType.F32, new long[] {1, values.length}, table));
        Buffer buffer = backend.allocate(values.length);
        backend.embed(staging, new int[] {0}, buffer);
        return buffer;
    }
}
