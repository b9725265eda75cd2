package fs.backend.cpu;

import fs.backend.cpu.NativeKernels.Activations;
import java.lang.foreign.MemorySegment;
import java.math.BigDecimal;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * libfscpu's float matmuls (BF16, F16, F32 weights) written out in Java, one value at a time (native/cpu/README.md,
 * "Float matmuls"): what every variant must reproduce bit for bit, vdpbf16ps included. A BF16 dot keeps one chain of
 * 16 lanes, chunks of 32 values (the last padded with zeros), lane l taking pair 2l, 2l + 1 (odd product first). An
 * F16 or F32 dot keeps 4 chains of 16 lanes, chunk c of 16 values (the last padded with zeros) into chain c % 4, lane
 * l taking value l; the chains are summed lane by lane as (c0 + c1) + (c2 + c3). Then the lanes as {@link #sumLanes}.
 */
final class FloatMatmulReference {
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int LANES = 16, CHAINS = 4;

    private FloatMatmulReference() {}

    /** x converted to {@code format}: bf16 by ggml's rounding (nearest, ties to even; NaN quiet), f16, or floats. */
    static byte[] convert(Activations format, float[] x) {
        MemorySegment out = MemorySegment.ofArray(new byte[(int) format.rowBytes(x.length)]);
        for (int j = 0; j < x.length; j++) {
            switch (format) {
                case BF16 -> out.set(I16, 2L * j, toBf16(x[j]));
                case F16 -> out.set(I16, 2L * j, Float.floatToFloat16(x[j]));
                case F32 -> out.set(F32, 4L * j, x[j]);
                default -> throw new IllegalArgumentException(format + " is not a float format");
            }
        }
        return out.toArray(ValueLayout.JAVA_BYTE);
    }

    static short toBf16(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7FFFFFFF) > 0x7F800000) return (short) ((u >>> 16) | 64);
        return (short) ((u + 0x7FFF + ((u >>> 16) & 1)) >>> 16);
    }

    /** Value j of a converted row. */
    static float value(Activations format, byte[] act, long rowOffset, int j) {
        MemorySegment a = MemorySegment.ofArray(act);
        return switch (format) {
            case BF16 -> Float.intBitsToFloat(a.get(I16, rowOffset + 2L * j) << 16);
            case F16 -> Float.float16ToFloat(a.get(I16, rowOffset + 2L * j));
            case F32 -> a.get(F32, rowOffset + 4L * j);
            default -> throw new IllegalArgumentException(format + " is not a float format");
        };
    }

    /** The dot of the weight row at {@code rowOffset} (k values of {@code format}) with the row at actOffset. */
    static float dot(Activations format, MemorySegment w, long rowOffset, byte[] act, long actOffset, int k) {
        MemorySegment a = MemorySegment.ofArray(act);
        if (format == Activations.BF16) {
            float[] lanes = new float[LANES];
            for (int c = 0; c * 32 < k; c++) {
                for (int l = 0; l < LANES; l++) {
                    int odd = 32 * c + 2 * l + 1, even = odd - 1;
                    float acc = step(lanes[l], bf16(w, rowOffset, odd, k), bf16(a, actOffset, odd, k));
                    lanes[l] = step(acc, bf16(w, rowOffset, even, k), bf16(a, actOffset, even, k));
                }
            }
            return sumLanes(lanes);
        }
        float[] chains = new float[CHAINS * LANES];
        for (int c = 0; c * LANES < k; c++) {
            for (int l = 0; l < LANES; l++) {
                int j = LANES * c + l, at = (c % CHAINS) * LANES + l;
                float wj = j < k ? value(format, w, rowOffset, j) : 0f;
                float xj = j < k ? value(format, a, actOffset, j) : 0f;
                chains[at] = Math.fma(wj, xj, chains[at]);
            }
        }
        float[] v = new float[LANES];
        for (int l = 0; l < LANES; l++) {
            v[l] = (chains[l] + chains[LANES + l]) + (chains[2 * LANES + l] + chains[3 * LANES + l]);
        }
        return sumLanes(v);
    }

    private static float value(Activations format, MemorySegment s, long rowOffset, int j) {
        return format == Activations.F16 ? Float.float16ToFloat(s.get(I16, rowOffset + 2L * j))
                : s.get(F32, rowOffset + 4L * j);
    }

    /** Value j of a bf16 row as vdpbf16ps reads it: a denormal is a zero (DAZ); past k, the padding's zero. */
    private static float bf16(MemorySegment s, long rowOffset, int j, int k) {
        if (j >= k) return 0f;
        int h = s.get(I16, rowOffset + 2L * j) & 0xFFFF;
        if ((h & 0x7F80) == 0) h &= 0x8000;
        return Float.intBitsToFloat(h << 16);
    }

    /**
     * acc + a·b as vdpbf16ps adds one product (the product of two bf16 is exact): rounded to nearest even with an
     * unbounded exponent, then zero (of its sign) if below 2^-126 (FTZ, tininess after rounding). Math.fma rounds
     * onto the denormal grid instead; the two differ only where that gives ±2^-126 from an exact sum in
     * [2^-126 − 2^-150, 2^-126 − 2^-151), which the unbounded rounding takes below 2^-126: decided exactly in
     * BigDecimal.
     */
    static float step(float acc, float a, float b) {
        float r = Math.fma(a, b, acc);
        float magnitude = Math.abs(r);
        if (magnitude < Float.MIN_NORMAL) return Math.copySign(0f, r);
        if (magnitude == Float.MIN_NORMAL) {
            BigDecimal exact = new BigDecimal(acc).add(
                    new BigDecimal(a).multiply(new BigDecimal(b))).abs();
            BigDecimal threshold = new BigDecimal(Math.scalb(1.0, -126) - Math.scalb(1.0, -151));
            if (exact.compareTo(threshold) < 0) return Math.copySign(0f, r);
        }
        return r;
    }

    /** The 16 lanes: halves added, then (0+4, 1+5, 2+6, 3+7) paired as (w0 + w2) + (w1 + w3). */
    static float sumLanes(float[] a) {
        float[] h = new float[8];
        for (int i = 0; i < 8; i++) h[i] = a[i] + a[i + 8];
        float w0 = h[0] + h[4], w1 = h[1] + h[5], w2 = h[2] + h[6], w3 = h[3] + h[7];
        return (w0 + w2) + (w1 + w3);
    }
}
