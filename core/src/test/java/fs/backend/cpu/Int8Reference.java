package fs.backend.cpu;

import fs.backend.cpu.NativeKernels.Activations;
import fs.format.ReferenceDequantizer;
import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * libfscpu's arithmetic written out in Java, one value at a time (native/cpu/README.md, "Arithmetic"): what every
 * variant of the native kernels must reproduce bit for bit. Weight blocks are decoded to integers (per weight its
 * quant, its group's scale and min; per block the f16 scales) by a reading of the layouts of its own, which
 * {@link #weight} checks against {@link fs.format.ReferenceDequantizer}.
 */
final class Int8Reference {
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Q8_K's offsets: the quants, the sums of 16, the multiples per group of 16 and per chunk of 32. */
    private static final int QS = 4, SUMS = 260, GROUP_MULTIPLES = 292, CHUNK_MULTIPLES = 324;
    /** Q8_0's offsets: the quants, the multiples per group of 4 (each twice). */
    private static final int Q8_0_QS = 4, Q8_0_MULTIPLES = 36;

    private Int8Reference() {}

    /**
     * One weight block as integers: weight j is {@code (d·scale[j])·q[j] − dmin·min[j]}, q with the format's offset
     * applied (Q4_0's −8, Q6_K's −32, Q3_K's −4) or sign (IQ2_XXS, whose d is the block's f16 d / 8 and whose
     * scale is 2s + 1); formats without mins have {@code min} all zero and {@code dmin} 0.
     */
    record Block(int[] q, int[] scale, int[] min, float d, float dmin) {
        /** Weight j as llama.cpp's reference dequantization computes it. */
        float weight(int j) {
            return d * scale[j] * q[j] - dmin * min[j];
        }
    }

    static boolean hasMins(DType type) {
        return type == DType.Q4_K || type == DType.Q5_K || type == DType.Q2_K;
    }

    static Block decode(DType type, MemorySegment w, long at) {
        int n = type.blockElements();
        int[] q = new int[n], scale = new int[n], min = new int[n];
        switch (type) {
            case Q8_0 -> {
                for (int j = 0; j < 32; j++) {
                    q[j] = signed(w, at + 2 + j);
                    scale[j] = 1;
                }
                return new Block(q, scale, min, half(w, at), 0f);
            }
            case Q4_0 -> {
                for (int j = 0; j < 32; j++) {
                    int packed = unsigned(w, at + 2 + j % 16);
                    q[j] = (j < 16 ? packed & 0xF : packed >> 4) - 8;
                    scale[j] = 1;
                }
                return new Block(q, scale, min, half(w, at), 0f);
            }
            case Q4_K, Q5_K -> {
                boolean five = type == DType.Q5_K;
                for (int g = 0; g < 8; g++) {
                    int s, m; // 6 bits each: groups 4..7 split into a nibble of bytes 8..11 and two spare top bits
                    if (g < 4) {
                        s = unsigned(w, at + 4 + g) & 63;
                        m = unsigned(w, at + 8 + g) & 63;
                    } else {
                        int nibbles = unsigned(w, at + 12 + g - 4);
                        s = nibbles & 0xF | unsigned(w, at + 4 + g - 4) >> 6 << 4;
                        m = nibbles >> 4 | unsigned(w, at + 8 + g - 4) >> 6 << 4;
                    }
                    for (int i = 0; i < 32; i++) {
                        int j = 32 * g + i;
                        q[j] = unsigned(w, at + (five ? 48 : 16) + 32 * (g / 2) + i) >> 4 * (g % 2) & 0xF;
                        if (five) q[j] |= (unsigned(w, at + 16 + i) >> g & 1) << 4; // Q5_K: bit g of qh[i]
                        scale[j] = s;
                        min[j] = m;
                    }
                }
                return new Block(q, scale, min, half(w, at), half(w, at + 2));
            }
            case Q2_K -> {
                for (int j = 0; j < 256; j++) {
                    int packed = unsigned(w, at + j / 16);
                    q[j] = unsigned(w, at + 16 + 32 * (j / 128) + j % 32) >> 2 * (j % 128 / 32) & 3;
                    scale[j] = packed & 0xF;
                    min[j] = packed >> 4;
                }
                return new Block(q, scale, min, half(w, at + 80), half(w, at + 82));
            }
            case Q3_K -> {
                for (int j = 0; j < 256; j++) {
                    int g = j / 16;
                    int low = unsigned(w, at + 96 + g % 8) >> 4 * (g / 8) & 0xF;
                    int high = unsigned(w, at + 104 + g % 4) >> 2 * (g / 4) & 3;
                    int bits = unsigned(w, at + 32 + 32 * (j / 128) + j % 32) >> 2 * (j % 128 / 32) & 3;
                    boolean set = (unsigned(w, at + j % 32) >> j / 32 & 1) != 0;
                    q[j] = set ? bits : bits - 4;
                    scale[j] = (low | high << 4) - 32;
                }
                return new Block(q, scale, min, half(w, at + 108), 0f);
            }
            case IQ2_XXS -> {
                // The signed grid magnitudes, read out of the reference decoder: the same block with d = 8 and every
                // group's scale s = 0 decodes to them (db = 8·0.5·0.25 = 1).
                MemorySegment unit = MemorySegment.ofArray(w.asSlice(at, 66).toArray(ValueLayout.JAVA_BYTE));
                unit.set(I16, 0, Float.floatToFloat16(8f));
                for (int g = 0; g < 8; g++) {
                    long signs = 6 + 8 * g;
                    unit.set(I32, signs, unit.get(I32, signs) & 0x0FFFFFFF);
                    for (int j = 32 * g; j < 32 * g + 32; j++) scale[j] = 2 * (w.get(I32, at + signs) >>> 28) + 1;
                }
                float[] magnitudes = new float[256];
                ReferenceDequantizer.decode(DType.IQ2_XXS, unit, magnitudes);
                for (int j = 0; j < 256; j++) q[j] = (int) magnitudes[j];
                return new Block(q, scale, min, half(w, at) * 0.125f, 0f);
            }
            case Q6_K -> {
                for (int j = 0; j < 256; j++) {
                    int h = j / 128, run = j % 128 / 32, l = j % 32;
                    int low = unsigned(w, at + 64 * h + 32 * (run % 2) + l) >> 4 * (run / 2) & 0xF;
                    int high = unsigned(w, at + 128 + 32 * h + l) >> 2 * run & 3;
                    q[j] = (low | high << 4) - 32;
                    scale[j] = signed(w, at + 192 + j / 16);
                }
                return new Block(q, scale, min, half(w, at + 208), 0f);
            }
            default -> throw new IllegalArgumentException("no native kernel for " + type);
        }
    }

    /**
     * x (whole blocks) quantized as {@code format}: per block amax = max |x| and d = amax/2032 as a float; per group
     * (Q8_0: of 4 values, Q8_K: a chunk of 32) its multiple m = max(1, ⌈16·max_g|x| / amax⌉) and q =
     * round-half-even(x·(2032 / (amax·m))) (0 for amax = 0), so that q stands for d·m·q; Q8_K then the int16 sums of
     * each 16 quants; the multiples. The float formats (BF16, F16, F32 weights' activations) are
     * {@link FloatMatmulReference}'s conversions.
     */
    static byte[] quantize(Activations format, float[] x) {
        if (format.elements == 1) return FloatMatmulReference.convert(format, x);
        MemorySegment out = MemorySegment.ofArray(new byte[(int) format.rowBytes(x.length)]);
        for (int b = 0; b < x.length / format.elements; b++) {
            int from = b * format.elements;
            long at = (long) b * format.bytes;
            float amax = 0f;
            for (int j = from; j < from + format.elements; j++) amax = Math.max(amax, Math.abs(x[j]));
            out.set(F32, at, amax / 2032f);
            if (format == Activations.Q8_0) {
                for (int g = 0; g < 8; g++) {
                    float groupMax = 0f;
                    for (int j = from + 4 * g; j < from + 4 * g + 4; j++) groupMax = Math.max(groupMax, Math.abs(x[j]));
                    int m = amax == 0f ? 1 : Math.max(1, (int) Math.ceil(groupMax * 16f / amax));
                    float id = amax != 0f ? 2032f / (amax * m) : 0f;
                    for (int j = 4 * g; j < 4 * g + 4; j++) {
                        out.set(ValueLayout.JAVA_BYTE, at + Q8_0_QS + j, round(x[from + j] * id));
                    }
                    out.set(I16, at + Q8_0_MULTIPLES + 4 * g, (short) m);
                    out.set(I16, at + Q8_0_MULTIPLES + 4 * g + 2, (short) m);
                }
                continue;
            }
            for (int c = 0; c < 8; c++) {
                float chunkMax = 0f;
                for (int j = from + 32 * c; j < from + 32 * c + 32; j++) chunkMax = Math.max(chunkMax, Math.abs(x[j]));
                int m = amax == 0f ? 1 : Math.max(1, (int) Math.ceil(chunkMax * 16f / amax));
                float id = amax != 0f ? 2032f / (amax * m) : 0f;
                for (int j = 32 * c; j < 32 * c + 32; j++) out.set(ValueLayout.JAVA_BYTE, at + QS + j, round(x[from + j] * id));
                out.set(I16, at + CHUNK_MULTIPLES + 2 * c, (short) m);
                out.set(I16, at + GROUP_MULTIPLES + 4 * c, (short) m);
                out.set(I16, at + GROUP_MULTIPLES + 4 * c + 2, (short) m);
            }
            for (int g = 0; g < 16; g++) {
                int sum = 0;
                for (int j = 16 * g; j < 16 * g + 16; j++) sum += signed(out, at + QS + j);
                out.set(I16, at + SUMS + 2 * g, (short) sum);
            }
        }
        return out.toArray(ValueLayout.JAVA_BYTE);
    }

    /** A scaled activation to its quant: the nearest integer, ties to even; the scaling keeps it within ±127. */
    private static byte round(float scaled) {
        return (byte) Math.rint(scaled);
    }

    /** The multiple of the group (Q8_0: of 4, Q8_K: of 32) that value j of a block at {@code at} lies in. */
    private static int multiple(Activations format, MemorySegment a, long at, int j) {
        if (format == Activations.Q8_0) return a.get(I16, at + Q8_0_MULTIPLES + 4 * (j / 4));
        return a.get(I16, at + CHUNK_MULTIPLES + 2 * (j / 32));
    }

    /** The offset of a block's quants. */
    private static long quants(Activations format) {
        return format == Activations.Q8_0 ? Q8_0_QS : QS;
    }

    /**
     * The activation value a quant stands for, d·m·q (for the exact products the tests compare with); the converted
     * value itself (the float formats).
     */
    static double activation(Activations format, byte[] act, long rowOffset, int j) {
        if (format.elements == 1) return FloatMatmulReference.value(format, act, rowOffset, j);
        MemorySegment a = MemorySegment.ofArray(act);
        long at = rowOffset + (long) (j / format.elements) * format.bytes;
        int i = j % format.elements;
        return (double) a.get(F32, at) * multiple(format, a, at, i) * signed(a, at + quants(format) + i);
    }

    /**
     * The dot of the weight row at {@code rowOffset} with the quantized row at {@code actOffset}, as the kernels
     * compute it. Q8_0, Q4_0, Q4_K, Q6_K, Q2_K and Q3_K: per block one exact int32, T = Σ scale·q·a (scale is the weight group's times
     * the activation group's multiple), {@code acc = fma(D, (float) T, acc)}. The other formats: per block eight int32
     * lane sums, lane l over the weights whose index inside their 32-weight chunk is 4l..4l+3, of scale·q·a; then
     * per lane {@code acc[l] = fma(D, (float) lane, acc[l])}, and at the end {@link #sumLanes}(acc). D is the
     * block's d_w·d_a (Q8_0, Q4_0: d_w an f16; K-quants: d_a·d_w). The mins, Σ min·m·a over the block, go likewise
     * into one accumulator with d_a·dmin, subtracted at the end.
     */
    static float dot(DType type, MemorySegment w, long rowOffset, byte[] act, long actOffset, int k) {
        Activations format = Activations.of(type);
        MemorySegment a = MemorySegment.ofArray(act);
        boolean perBlock = type == DType.Q8_0 || type == DType.Q4_0 || type == DType.Q4_K || type == DType.Q6_K
                || type == DType.Q2_K || type == DType.Q3_K;
        long qs = quants(format);
        float[] acc = new float[8];
        float mins = 0f;
        for (int b = 0; b < k / type.blockElements(); b++) {
            Block block = decode(type, w, rowOffset + (long) b * type.blockBytes());
            long at = actOffset + (long) b * format.bytes;
            float da = a.get(F32, at);
            long[] lanes = new long[8];
            long minSum = 0;
            for (int j = 0; j < type.blockElements(); j++) {
                int x = signed(a, at + qs + j), m = multiple(format, a, at, j);
                lanes[perBlock ? 0 : j % 32 / 4] += (long) block.scale()[j] * m * block.q()[j] * x;
                minSum += (long) block.min()[j] * m * x;
            }
            for (int l = 0; l < (perBlock ? 1 : 8); l++) {
                if (lanes[l] != (int) lanes[l]) throw new AssertionError("lane sum " + lanes[l] + " overflows int32");
                acc[l] = Math.fma(block.d() * da, (float) lanes[l], acc[l]);
            }
            if (hasMins(type)) mins = Math.fma(da * block.dmin(), (float) minSum, mins);
        }
        float sum = perBlock ? acc[0] : sumLanes(acc);
        return hasMins(type) ? sum - mins : sum;
    }

    /** (acc[0] + acc[4] + (acc[2] + acc[6])) + (acc[1] + acc[5] + (acc[3] + acc[7])), in that association. */
    static float sumLanes(float[] acc) {
        float t0 = acc[0] + acc[4], t1 = acc[1] + acc[5], t2 = acc[2] + acc[6], t3 = acc[3] + acc[7];
        return (t0 + t2) + (t1 + t3);
    }

    private static float half(MemorySegment s, long at) {
        return Float.float16ToFloat(s.get(I16, at));
    }

    private static int signed(MemorySegment s, long at) {
        return s.get(ValueLayout.JAVA_BYTE, at);
    }

    private static int unsigned(MemorySegment s, long at) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, at));
    }
}
