package fs.format;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Scalar reference decoding of every ggml {@link DType} fs reads to float32, bit-exact to llama.cpp's reference
 * dequantization (ggml-quants.c's dequantize_row_*, and gguf-py's quants.py, which agree): each float is computed
 * with the same float32 operations in the same order, e.g. Q4_K's {@code (d * sc) * q - (dmin * m)}. It is the
 * specification the fast kernels are tested against, written for clarity, not speed.
 *
 * <p>Why a kernel may reorder or fuse these and still be bit-exact: every product here is exact in float32. A scale
 * is an f16 (11 significant bits) and the integers it multiplies have at most 13 bits together (Q6_K's 8-bit scale
 * times a 6-bit quant: 11 + 7 + 6 = 24, a float's full significand), so the only rounding is the K-quants' final
 * subtraction of the min, which happens once whether or not it is fused. (Checked by hand: Q4_K decoded with
 * Math.fma still reproduces llama.cpp's floats on every q-tied file; reading one scale bit from the wrong byte does
 * not.)
 *
 * <p>The block layouts are drawn below with byte offsets inside one block; all multi-byte fields are
 * little-endian, "f16" is an IEEE half (ggml_half), a row is its blocks back to back. QK_K = 256.
 */
public final class ReferenceDequantizer {
    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ReferenceDequantizer() {}

    /**
     * Whether fs reads weights stored as {@code type}: the formats it decodes are the ggml types, as {@link DType}
     * lists only those fs reads. Every backend reads a subset of these (the CPU backend all of them), so this is what
     * a checkpoint's weights are checked against before a backend is chosen.
     */
    public static boolean decodes(DType type) {
        return type.isGgmlType();
    }

    /**
     * Decodes {@code out.length} elements of {@code type} from the start of {@code bytes} into {@code out}.
     * {@code out.length} must be a whole number of blocks and {@code bytes} must hold them.
     */
    public static void decode(DType type, MemorySegment bytes, float[] out) {
        long needed = type.rowBytes(out.length);
        if (bytes.byteSize() < needed) {
            throw new IllegalArgumentException(out.length + " " + type + " elements need " + needed + " bytes, "
                    + bytes.byteSize() + " given");
        }
        int blocks = out.length / type.blockElements();
        for (int b = 0; b < blocks; b++) {
            long at = (long) b * type.blockBytes();
            int o = b * type.blockElements();
            switch (type) {
                case F32 -> out[o] = bytes.get(F32, at);
                case F16 -> out[o] = Float.float16ToFloat(bytes.get(HALF, at));
                case BF16 -> out[o] = Float.intBitsToFloat(bytes.get(HALF, at) << 16); // the top half of a float32
                case Q8_0 -> q8_0(bytes, at, out, o);
                case Q4_0 -> q4_0(bytes, at, out, o);
                case Q2_K -> q2_k(bytes, at, out, o);
                case Q3_K -> q3_k(bytes, at, out, o);
                case Q4_K -> q4_k(bytes, at, out, o);
                case Q5_K -> q5_k(bytes, at, out, o);
                case Q6_K -> q6_k(bytes, at, out, o);
                case IQ2_XXS -> iq2_xxs(bytes, at, out, o);
                // every DType is named, so a new one does not compile until it is given its decoding or none
                case F64, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2 ->
                        throw new IllegalArgumentException("no reference decoding of " + type);
            }
        }
    }

    /**
     * Q8_0: 32 weights, 34 bytes.
     * <pre>
     *   0      2                                 34
     *   | d f16 | q[0] q[1] ... q[31]  (int8)     |      y[i] = q[i] * d
     * </pre>
     */
    private static void q8_0(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at);
        for (int i = 0; i < 32; i++) out[o + i] = bytes.get(ValueLayout.JAVA_BYTE, at + 2 + i) * d;
    }

    /**
     * Q4_0: 32 weights, 18 bytes; byte j holds weight j in its low nibble and weight j + 16 in its high one.
     * <pre>
     *   0      2                                 18
     *   | d f16 | qs[0] ... qs[15]                |      y[j] = ((qs[j] & 0xF) - 8) * d
     *            hi:lo = w16:w0 ... w31:w15              y[j + 16] = ((qs[j] >> 4) - 8) * d
     * </pre>
     */
    private static void q4_0(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at);
        for (int j = 0; j < 16; j++) {
            int q = u8(bytes, at + 2 + j);
            out[o + j] = ((q & 0xF) - 8) * d;
            out[o + j + 16] = ((q >> 4) - 8) * d;
        }
    }

    /**
     * Q2_K: 256 weights, 84 bytes, in 16 groups of 16, each with a 4-bit scale and a 4-bit min.
     * <pre>
     *   0                16                        80      82       84
     *   | scales[16]      | qs[64]                  | d f16 | dmin f16 |
     *     group g: lo nibble = scale, hi = min
     *   qs: two halves of 32 bytes; in half h, bits 2s..2s+1 of byte l (s = 0..3) are weight 128h + 32s + l,
     *   so groups 8h + 2s (bytes 0..15) and 8h + 2s + 1 (bytes 16..31).
     *   y = (d * scale) * q - (dmin * min)
     * </pre>
     */
    private static void q2_k(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at + 80);
        float dmin = half(bytes, at + 82);
        for (int g = 0; g < 16; g++) {
            int packed = u8(bytes, at + g);
            float scale = d * (packed & 0xF);
            float min = dmin * (packed >> 4);
            for (int e = 16 * g; e < 16 * g + 16; e++) {
                int q = u8(bytes, at + 16 + 32 * (e / 128) + e % 32) >> 2 * (e % 128 / 32) & 3;
                out[o + e] = scale * q - min;
            }
        }
    }

    /**
     * Q3_K: 256 weights, 110 bytes, in 16 groups of 16 with a signed 6-bit scale each; a weight is 2 low bits in qs
     * and a high bit in hmask, and is 4 less when that bit is clear (q = low - 4 + 4 * bit, from -4 to 3).
     * <pre>
     *   0            32                      96              108      110
     *   | hmask[32]    | qs[64]                | scales[12]    | d f16 |
     *   weight e = 128h + 32s + l (h = 0..1, s = 0..3, l = 0..31):
     *     low 2 bits: bits 2s..2s+1 of qs[32h + l];   high bit: bit e / 32 of hmask[l]
     *   scale of group g (0..15): low 4 bits from the nibbles of bytes 0..7 (low nibbles are groups 0..7, high
     *     nibbles 8..15), top 2 bits from bits 2(g / 4).. of byte 8 + g % 4; stored plus 32.
     *   y = (d * (scale - 32)) * q
     * </pre>
     */
    private static void q3_k(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at + 108);
        for (int g = 0; g < 16; g++) {
            int low = u8(bytes, at + 96 + g % 8) >> 4 * (g / 8) & 0xF;
            int high = u8(bytes, at + 96 + 8 + g % 4) >> 2 * (g / 4) & 3;
            float scale = d * ((low | high << 4) - 32);
            for (int e = 16 * g; e < 16 * g + 16; e++) {
                int l = e % 32;
                int q = u8(bytes, at + 32 + 32 * (e / 128) + l) >> 2 * (e % 128 / 32) & 3;
                boolean highBit = (u8(bytes, at + l) >> e / 32 & 1) != 0;
                out[o + e] = scale * (highBit ? q : q - 4);
            }
        }
    }

    /**
     * Q4_K: 256 weights, 144 bytes, in 8 groups of 32, each with a 6-bit scale and a 6-bit min.
     * <pre>
     *   0      2         4              16                        144
     *   | d f16 | dmin f16 | scales[12]   | qs[128]                 |
     *   qs: four runs of 32 bytes; run r's low nibbles are group 2r, its high nibbles group 2r + 1.
     * </pre>
     * {@link #scaleAndMin} unpacks the 12 scale bytes; y = (d * scale) * q - (dmin * min).
     */
    private static void q4_k(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at);
        float dmin = half(bytes, at + 2);
        for (int group = 0; group < 8; group++) {
            int packed = scaleAndMin(bytes, at + 4, group);
            float scale = d * (packed & 0x3F);
            float min = dmin * (packed >> 8);
            for (int l = 0; l < 32; l++) {
                int q = u8(bytes, at + 16 + 32 * (group / 2) + l) >> 4 * (group % 2) & 0xF;
                out[o + 32 * group + l] = scale * q - min;
            }
        }
    }

    /**
     * Q5_K: Q4_K's layout with a fifth bit per weight: bit g of qh[l] is the high bit of weight 32g + l.
     * <pre>
     *   0      2         4              16         48                 176
     *   | d f16 | dmin f16 | scales[12]   | qh[32]   | qs[128]          |
     *   y = (d * scale) * (nibble | bit << 4) - (dmin * min)
     * </pre>
     */
    private static void q5_k(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at);
        float dmin = half(bytes, at + 2);
        for (int group = 0; group < 8; group++) {
            int packed = scaleAndMin(bytes, at + 4, group);
            float scale = d * (packed & 0x3F);
            float min = dmin * (packed >> 8);
            for (int l = 0; l < 32; l++) {
                int low = u8(bytes, at + 48 + 32 * (group / 2) + l) >> 4 * (group % 2) & 0xF;
                int high = u8(bytes, at + 16 + l) >> group & 1;
                out[o + 32 * group + l] = scale * (low | high << 4) - min;
            }
        }
    }

    /**
     * The 6-bit scale (low byte of the result) and min (second byte) of group {@code group} (0..7) of a Q4_K or
     * Q5_K block, from the 12 scale bytes at {@code at}: groups 0..3 use the low 6 bits of bytes 0..3 (scales) and
     * 4..7 (mins); groups 4..7 take their low 4 bits from the nibbles of bytes 8..11 and their top 2 bits from the
     * spare top bits of bytes 0..3 (scales) and 4..7 (mins).
     * <pre>
     *   byte  0..3: ss|SSSSSS   S = scale of group j, s = top bits of scale j + 4
     *   byte  4..7: mm|MMMMMM   M = min of group j,   m = top bits of min j + 4
     *   byte 8..11: mmmm|ssss   low bits of min and scale of group j + 4
     * </pre>
     */
    private static int scaleAndMin(MemorySegment bytes, long at, int group) {
        int scale;
        int min;
        if (group < 4) {
            scale = u8(bytes, at + group) & 0x3F;
            min = u8(bytes, at + group + 4) & 0x3F;
        } else {
            int low = u8(bytes, at + group + 4);
            scale = low & 0xF | (u8(bytes, at + group - 4) >> 6) << 4;
            min = low >> 4 | (u8(bytes, at + group) >> 6) << 4;
        }
        return scale | min << 8;
    }

    /**
     * Q6_K: 256 weights, 210 bytes, in 16 groups of 16 with a signed 8-bit scale each; a weight is 6 bits, 4 in
     * ql and 2 in qh, stored minus 32.
     * <pre>
     *   0                  128          192            208      210
     *   | ql[128]            | qh[64]     | scales[16]    | d f16 |
     *   weight e = 128h + 32c + l (h = 0..1, c = 0..3, l = 0..31):
     *     low 4 bits:  ql[64h + 32(c & 1) + l], low nibble for c < 2, high nibble for c >= 2
     *     high 2 bits: bits 2c..2c+1 of qh[32h + l]
     *   y = (d * scales[e / 16]) * (q - 32)
     * </pre>
     */
    private static void q6_k(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at + 208);
        for (int g = 0; g < 16; g++) {
            float scale = d * bytes.get(ValueLayout.JAVA_BYTE, at + 192 + g);
            for (int e = 16 * g; e < 16 * g + 16; e++) {
                int h = e / 128;
                int c = e % 128 / 32;
                int l = e % 32;
                int low = u8(bytes, at + 64 * h + 32 * (c & 1) + l) >> 4 * (c >> 1) & 0xF;
                int high = u8(bytes, at + 128 + 32 * h + l) >> 2 * c & 3;
                out[o + e] = scale * ((low | high << 4) - 32);
            }
        }
    }

    /**
     * IQ2_XXS: 256 weights, 66 bytes, in 8 groups of 32 weights, each 8 bytes: two little-endian uint32s.
     * <pre>
     *   0      2                                                  66
     *   | d f16 | group 0: grid u32, signs u32 | ... | group 7     |
     *   grid u32:  byte k (k = 0..3) picks the grid point of weights 8k..8k+7 ({@link Iq2XxsTables#gridPoint})
     *   signs u32: bits 7k..7k+6 are the signs of weights 8k..8k+7 ({@link Iq2XxsTables#signs}),
     *              bits 28..31 the group's 4-bit scale s
     *   db = d * (0.5 + s) * 0.25;   y = db * magnitude, negated where the sign bit is set
     * </pre>
     */
    private static void iq2_xxs(MemorySegment bytes, long at, float[] out, int o) {
        float d = half(bytes, at);
        for (int group = 0; group < 8; group++) {
            int grid = bytes.get(U32, at + 2 + 8 * group);
            int signBits = bytes.get(U32, at + 2 + 8 * group + 4);
            float db = d * (0.5f + (signBits >>> 28)) * 0.25f;
            for (int k = 0; k < 4; k++) {
                long point = Iq2XxsTables.gridPoint(grid >>> 8 * k & 0xFF);
                int signs = Iq2XxsTables.signs(signBits >>> 7 * k & 0x7F);
                for (int j = 0; j < 8; j++) {
                    float value = db * (point >>> 8 * j & 0xFF);
                    out[o + 32 * group + 8 * k + j] = (signs >> j & 1) != 0 ? -value : value;
                }
            }
        }
    }

    private static float half(MemorySegment bytes, long at) {
        return Float.float16ToFloat(bytes.get(HALF, at));
    }

    private static int u8(MemorySegment bytes, long at) {
        return Byte.toUnsignedInt(bytes.get(ValueLayout.JAVA_BYTE, at));
    }
}
