/*
 * What every variant of the kernels shares: the block layouts (byte offsets inside one block, as
 * fs.quant.ReferenceDequantizer draws them), unaligned loads, IEEE half conversions, Q4_K's scale unpacking, the
 * order in which a row's eight lane sums are added, and the matmul loop around a format's dot product.
 */
#ifndef FSCPU_BLOCKS_H
#define FSCPU_BLOCKS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fscpu.h"

/*
 * Activation blocks. Q8_0: float d, 32 int8, and the multiple m (1..16) of each group of 4 values: quant j stands
 * for d·m_{j/4}·q_j (see chunk_multiple: the same rule at a finer grain); the multiples as 16 int16, group g's at
 * 2g and 2g + 1 (the int16 pairs vpmaddwd takes, each pair the group's 4 products' two halves). Q8_K: float d, 256 int8, 16 int16 sums of 16 consecutive quants, and
 * the multiple m (1..16) of each chunk of 32: quant j of chunk c stands for d·m_c·q_j (see chunk_multiple). The
 * multiples are stored twice, as the kernels take them: per group of 16 (16 int16, chunk c's at 2c and 2c + 1)
 * and per chunk (8 int16).
 */
#define Q8_0_BYTES FS_Q8_0_BYTES
#define Q8_K_BYTES FS_Q8_K_BYTES
#define Q8_0_QS 4
#define Q8_0_MULTIPLES 36
#define Q8_K_QS 4
#define Q8_K_SUMS 260
#define Q8_K_GROUP_MULTIPLES 292
#define Q8_K_CHUNK_MULTIPLES 324

/* Weight blocks: bytes per block and the offsets of their fields. */
#define Q8_0_BLOCK 34
#define Q4_0_BLOCK 18
#define Q4_K_BLOCK 144 /* d f16 @0, dmin f16 @2, scales[12] @4, qs[128] @16 */
#define Q6_K_BLOCK 210 /* ql[128] @0, qh[64] @128, scales[16] int8 @192, d f16 @208 */
#define Q5_K_BLOCK 176 /* d f16 @0, dmin f16 @2, scales[12] @4, qh[32] @16, qs[128] @48 */
#define Q2_K_BLOCK 84  /* scales[16] @0 (scale | min << 4), qs[64] @16, d f16 @80, dmin f16 @82 */
#define Q3_K_BLOCK 110 /* hmask[32] @0, qs[64] @32, scales[12] @96, d f16 @108 */
#define IQ2_XXS_BLOCK 66 /* d f16 @0, then per group of 32: grid u32, signs u32 (scale in the top 4 bits) */

static inline uint16_t load_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint32_t load_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float load_f32(const uint8_t *p) {
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline int16_t load_i16(const uint8_t *p) {
    int16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float float_of_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* An IEEE half to float: exact. */
static inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    if (exponent == 0x1F) return float_of_bits(sign | 0x7F800000 | mantissa << 13);
    if (exponent != 0) return float_of_bits(sign | (exponent + 112) << 23 | mantissa << 13);
    if (mantissa == 0) return float_of_bits(sign);
    uint32_t biased = 113; /* a subnormal: mantissa * 2^-24, normalized */
    while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        biased--;
    }
    return float_of_bits(sign | biased << 23 | (mantissa & 0x3FF) << 13);
}

/* A float to the nearest IEEE half, ties to even (as F16C's vcvtps2ph and Java's Float.floatToFloat16). */
static inline uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000, magnitude = x & 0x7FFFFFFF;
    if (magnitude > 0x7F800000) return (uint16_t)(sign | 0x7E00);
    if (magnitude >= 0x477FF000) return (uint16_t)(sign | 0x7C00); /* 65520 and above round to infinity */
    uint32_t mantissa, shift, half;
    if (magnitude >= 0x38800000) { /* a normal half: drop 13 mantissa bits; a carry may bump the exponent */
        half = (magnitude >> 23) - 112;
        half = half << 10 | (magnitude & 0x7FFFFF) >> 13;
        uint32_t rest = magnitude & 0x1FFF;
        if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    if (magnitude < 0x33000000) return (uint16_t)sign; /* below 2^-25: zero */
    mantissa = (magnitude & 0x7FFFFF) | 0x800000;      /* a subnormal half: units of 2^-24 */
    shift = 126 - (magnitude >> 23);
    half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1), tie = 1u << (shift - 1);
    if (rest > tie || (rest == tie && (half & 1))) half++;
    return (uint16_t)(sign | half);
}

/*
 * A Q8_K chunk's step as a multiple of the block's unit amax / 2032 (= amax / 127 / 16): the least m in 1..16 with
 * m·amax ≥ 16·chunk_max, so the chunk's quants, x·2032 / (amax·m) rounded, stay within ±127 (the quotient below is
 * rounded: where that takes m one too low, the largest quant is 127 times 1 + a few 2^-24, still rounded to 127). One step per 256 values would give a chunk far below the block's largest
 * value as few as a handful of levels; heavy-tailed activations have such chunks in most blocks, and a step of its
 * own per chunk halves the logits' distance from the exact ones on models/q-tied (native/cpu/README.md). The
 * multiple folds into the integer group scales, so the dot products stay integer.
 */
static inline int chunk_multiple(float chunk_max, float amax) {
    if (amax == 0.0f) return 1;
    int m = (int)ceilf(chunk_max * 16.0f / amax);
    return m < 1 ? 1 : m;
}

/* The multiple of group g (values 4g..4g + 3) of the Q8_0 activation block a. */
static inline int32_t q8_0_multiple(const uint8_t *a, int g) {
    return load_i16(a + Q8_0_MULTIPLES + 4 * g);
}

/*
 * A Q8_0 activation block's d = amax / 2032 and group g's multiple, stored; returns the group's scaling of x,
 * 2032 / (amax·m) (0 when amax is 0). Per group of 4 rather than per block of 32: a block holding one of the
 * RMSNorm's outlier channels would otherwise leave its other values few levels (native/cpu/README.md).
 */
static inline float q8_0_group_scaling(uint8_t *block, int g, float group_max, float amax) {
    int16_t m = (int16_t)chunk_multiple(group_max, amax);
    memcpy(block + Q8_0_MULTIPLES + 4 * g, &m, sizeof m);
    memcpy(block + Q8_0_MULTIPLES + 4 * g + 2, &m, sizeof m);
    return amax != 0.0f ? 2032.0f / (amax * (float)m) : 0.0f;
}

/*
 * The steps of the Q8_0 activation block of the 32 values x: d and the groups' multiples, stored in block, and each
 * group's scaling of x (every variant's quantizer: the quants are x·scaling[j / 4], rounded half to even).
 */
static inline void q8_0_steps(const float *x, uint8_t *block, float scaling[8]) {
    float group_max[8], amax = 0.0f;
    for (int g = 0; g < 8; g++) {
        group_max[g] = 0.0f;
        for (int j = 4 * g; j < 4 * g + 4; j++) group_max[g] = fmaxf(group_max[g], fabsf(x[j]));
        amax = fmaxf(amax, group_max[g]);
    }
    float d = amax / 2032.0f;
    memcpy(block, &d, sizeof d);
    for (int g = 0; g < 8; g++) scaling[g] = q8_0_group_scaling(block, g, group_max[g], amax);
}

/* Stores chunk c's multiple m in both of a Q8_K block's tables. */
static inline void store_multiple(uint8_t *block, int c, int m) {
    int16_t v = (int16_t)m;
    memcpy(block + Q8_K_CHUNK_MULTIPLES + 2 * c, &v, sizeof v);
    memcpy(block + Q8_K_GROUP_MULTIPLES + 4 * c, &v, sizeof v);
    memcpy(block + Q8_K_GROUP_MULTIPLES + 4 * c + 2, &v, sizeof v);
}

/*
 * The 6-bit scales (sc) and mins (mn) of the 8 groups of a Q4_K block, from its 12 scale bytes: groups 0..3 take
 * the low 6 bits of bytes 0..3 (scales) and 4..7 (mins), groups 4..7 their low 4 bits from the nibbles of bytes
 * 8..11 and their top 2 bits from the top bits of bytes 0..3 (scales) and 4..7 (mins). Returned packed four to a
 * word, group g in byte g % 4 of word g / 4: sc[0] = groups 0..3, sc[1] = 4..7.
 */
static inline void q4_k_scales(const uint8_t *scales, uint32_t sc[2], uint32_t mn[2]) {
    uint32_t a = load_u32(scales), b = load_u32(scales + 4), c = load_u32(scales + 8);
    sc[0] = a & 0x3F3F3F3F;
    mn[0] = b & 0x3F3F3F3F;
    sc[1] = (c & 0x0F0F0F0F) | ((a >> 6) & 0x03030303) << 4;
    mn[1] = ((c >> 4) & 0x0F0F0F0F) | ((b >> 6) & 0x03030303) << 4;
}

/*
 * The 16 6-bit scales of a Q3_K block as stored (plus 32), byte g of out group g's, from its 12 scale bytes: group
 * g takes its low 4 bits from the nibble g / 8 of byte g % 8 and its top 2 bits from bits 2(g / 4).. of byte
 * 8 + g % 4. Four bytes at a time, so that a kernel unpacks a block's scales in a few integer operations.
 */
static inline void q3_k_scale_bytes(const uint8_t *scales, uint32_t out[4]) {
    uint32_t a = load_u32(scales), b = load_u32(scales + 4), top = load_u32(scales + 8);
    out[0] = (a & 0x0F0F0F0F) | (top & 0x03030303) << 4;
    out[1] = (b & 0x0F0F0F0F) | (top >> 2 & 0x03030303) << 4;
    out[2] = (a >> 4 & 0x0F0F0F0F) | (top >> 4 & 0x03030303) << 4;
    out[3] = (b >> 4 & 0x0F0F0F0F) | (top >> 6 & 0x03030303) << 4;
}

/* The 16 signed scales of a Q3_K block, −32..31. */
static inline void q3_k_scales(const uint8_t *scales, int16_t out[16]) {
    uint32_t bytes[4];
    q3_k_scale_bytes(scales, bytes);
    for (int g = 0; g < 16; g++) out[g] = (int16_t)((bytes[g / 4] >> 8 * (g % 4) & 0xFF) - 32);
}

/*
 * IQ2_XXS's 128 sign patterns: 7 stored bits, the 8th making the count of minus signs even; byte j of entry v is
 * the sign of weight j, as an int8 +1 or -1.
 */
#define IQ2_PARITY(v) (((v) ^ (v) >> 1 ^ (v) >> 2 ^ (v) >> 3 ^ (v) >> 4 ^ (v) >> 5 ^ (v) >> 6) & 1)
#define IQ2_BIT(v, j) (((j) < 7 ? (v) >> (j) : IQ2_PARITY(v)) & 1)
#define IQ2_BYTE(v, j) ((uint64_t)(IQ2_BIT(v, j) ? 0xFF : 0x01) << 8 * (j))
#define IQ2_SIGNS(v)                                                                                                 \
    (IQ2_BYTE(v, 0) | IQ2_BYTE(v, 1) | IQ2_BYTE(v, 2) | IQ2_BYTE(v, 3) | IQ2_BYTE(v, 4) | IQ2_BYTE(v, 5)             \
     | IQ2_BYTE(v, 6) | IQ2_BYTE(v, 7))
#define IQ2_SIGNS8(v)                                                                                                \
    IQ2_SIGNS(v), IQ2_SIGNS(v + 1), IQ2_SIGNS(v + 2), IQ2_SIGNS(v + 3), IQ2_SIGNS(v + 4), IQ2_SIGNS(v + 5),           \
        IQ2_SIGNS(v + 6), IQ2_SIGNS(v + 7)
static const uint64_t iq2_signs[128] = {
    IQ2_SIGNS8(0),  IQ2_SIGNS8(8),  IQ2_SIGNS8(16), IQ2_SIGNS8(24), IQ2_SIGNS8(32),  IQ2_SIGNS8(40),
    IQ2_SIGNS8(48), IQ2_SIGNS8(56), IQ2_SIGNS8(64), IQ2_SIGNS8(72), IQ2_SIGNS8(80),  IQ2_SIGNS8(88),
    IQ2_SIGNS8(96), IQ2_SIGNS8(104), IQ2_SIGNS8(112), IQ2_SIGNS8(120),
};

/* IQ2_XXS's grid: the OpenCL kernels' table (checked against fs.quant.Iq2XxsTables), read as C. */
#define __constant static const
#define ulong uint64_t
#include "../kernels/iq2_xxs_grid.h"
#undef ulong
#undef __constant

/*
 * The sum of a row's eight float lane accumulators, in this order in every variant (and in the Java reference):
 * t[i] = v[i] + v[i + 4], then (t[0] + t[2]) + (t[1] + t[3]).
 */
static inline float sum_lanes(const float v[8]) {
    float t0 = v[0] + v[4], t1 = v[1] + v[5], t2 = v[2] + v[6], t3 = v[3] + v[7];
    return (t0 + t2) + (t1 + t3);
}

/*
 * fs_matmul_F_V over a dot product dot(weight row, activation row, blocks) of blocks of ELEMENTS weights.
 * Activation rows are taken four at a time over the slice's weight rows, so each weight row is read from memory
 * once per four and from L1 for the others. Every output is the same function of its two rows, whatever the slice,
 * the tile or the number of rows. (Two levels so that a variant's name given as a macro, FS_VARIANT, is expanded
 * before it is pasted.)
 */
#define FS_MATMUL(F, V, ELEMENTS, ACT_BYTES, dot) FS_MATMUL_EXPANDED(F, V, ELEMENTS, ACT_BYTES, dot)
#define FS_MATMUL_EXPANDED(F, V, ELEMENTS, ACT_BYTES, dot)                                                           \
    FS_API void fs_matmul_##F##_##V(const void *w, int64_t row_bytes, int row_from, int row_to, const void *act,     \
                                    int act_rows, int k, float *out, int64_t out_stride) {                           \
        const uint8_t *weights = w, *acts = act;                                                                     \
        int blocks = k / (ELEMENTS);                                                                                 \
        int64_t act_row_bytes = (int64_t)blocks * (ACT_BYTES);                                                       \
        for (int r0 = 0; r0 < act_rows; r0 += 4) {                                                                   \
            int r1 = r0 + 4 < act_rows ? r0 + 4 : act_rows;                                                          \
            for (int i = row_from; i < row_to; i++) {                                                                \
                const uint8_t *row = weights + (int64_t)i * row_bytes;                                               \
                for (int r = r0; r < r1; r++) out[r * out_stride + i] = dot(row, acts + r * act_row_bytes, blocks);  \
            }                                                                                                        \
        }                                                                                                            \
    }

#endif
