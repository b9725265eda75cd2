/*
 * The portable variant, in plain C: the arithmetic of every kernel written out one value at a time. The SIMD
 * variants compute the same integers and the same float operations in the same order (README.md, "Arithmetic"),
 * so this file is also their specification.
 */
#include <math.h>

#include "repacked.h"

FS_API void fs_quantize_q8_0_scalar(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t b = 0; b < count / 32; b++, x += 32, out += Q8_0_BYTES) {
        float scaling[8];
        q8_0_steps(x, out, scaling);
        for (int j = 0; j < 32; j++) out[Q8_0_QS + j] = (uint8_t)(int8_t)lrintf(x[j] * scaling[j / 4]);
    }
}

FS_API void fs_quantize_q8_k_scalar(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t b = 0; b < count / 256; b++, x += 256, out += Q8_K_BYTES) {
        float chunk_max[8], amax = 0.0f;
        for (int c = 0; c < 8; c++) {
            chunk_max[c] = 0.0f;
            for (int j = 32 * c; j < 32 * c + 32; j++) chunk_max[c] = fmaxf(chunk_max[c], fabsf(x[j]));
            amax = fmaxf(amax, chunk_max[c]);
        }
        float d = amax / 2032.0f;
        memcpy(out, &d, sizeof d);
        int8_t *q = (int8_t *)(out + Q8_K_QS);
        for (int c = 0; c < 8; c++) {
            int m = chunk_multiple(chunk_max[c], amax);
            float id = amax != 0.0f ? 2032.0f / (amax * (float)m) : 0.0f;
            for (int j = 32 * c; j < 32 * c + 32; j++) q[j] = (int8_t)lrintf(x[j] * id);
            store_multiple(out, c, m);
        }
        for (int g = 0; g < 16; g++) {
            int16_t sum = 0;
            for (int j = 16 * g; j < 16 * g + 16; j++) sum = (int16_t)(sum + q[j]);
            memcpy(out + Q8_K_SUMS + 2 * g, &sum, sizeof sum);
        }
    }
}

/*
 * Every dot product but Q8_0's, Q4_0's, Q4_K's, Q6_K's, Q2_K's and Q3_K's (one int32 per block: below) sums a block's integer products
 * into eight int32 lanes, lane l taking the weights whose index inside their 32-weight chunk is 4l..4l + 3 (as a
 * 256-bit vpmaddubsw + vpmaddwd or vpdpbusd does), and adds each lane times the block's float scale into its float lane:
 * acc[l] = fmaf(d, (float)lane[l], acc[l]).
 * Against Q8_K activations a group's integer scale is its weight scale times its chunk's multiple m. Every lane sum
 * is exact in int32 (under 2^27 in magnitude: Q5_K's 4·31·127·63·16 per chunk, times 8) and is rounded once, to
 * the nearest float; the other roundings are those fmafs, the block scales' products and sum_lanes.
 */
static inline void add_lanes(float acc[8], float d, const int32_t lanes[8]) {
    for (int l = 0; l < 8; l++) acc[l] = fmaf(d, (float)lanes[l], acc[l]);
}

/* Σ over the 32 products w[j]·a[j] of one chunk into lanes[j / 4], each times scale (a group's, or 1). */
static inline void chunk_lanes(const int8_t w[32], const int8_t *a, int32_t scale_low, int32_t scale_high,
                               int32_t lanes[8]) {
    for (int j = 0; j < 32; j++) lanes[j / 4] += (j < 16 ? scale_low : scale_high) * w[j] * a[j];
}

/* The multiple of chunk c of the Q8_K activation block a. */
static inline int32_t multiple(const uint8_t *a, int c) {
    return load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
}

/*
 * Q8_0 weights by Q8_0 activations: per block one exact int32, T = Σ_g m_g·Σ w·a over group g (values 4g..4g + 3;
 * |T| ≤ 32·128·127·16 < 2^24, so exact as a float too), times d_w·d_a (the f16 d_w, exact as a float, times the
 * float d_a) into one float: a group of 16 rows' block integers then fit one vector (the repacked kernels).
 */
static float dot_q8_0(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q8_0_BLOCK, a += Q8_0_BYTES) {
        const int8_t *q = (const int8_t *)(w + 2), *x = (const int8_t *)(a + Q8_0_QS);
        int32_t t = 0;
        for (int j = 0; j < 32; j++) t += q8_0_multiple(a, j / 4) * q[j] * x[j];
        acc = fmaf(half_to_float(load_u16(w)) * load_f32(a), (float)t, acc);
    }
    return acc;
}

/*
 * Q4_0 weights (nibble − 8: low nibbles are weights 0..15, high nibbles 16..31) by Q8_0 activations: per block one
 * exact int32, T = Σ_g m_g·Σ (q − 8)·a over group g (|T| ≤ 32·8·127·16), times d_w·d_a into one float.
 */
static float dot_q4_0(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q4_0_BLOCK, a += Q8_0_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_0_QS);
        int32_t t = 0;
        for (int j = 0; j < 16; j++)
            t += q8_0_multiple(a, j / 4) * ((w[2 + j] & 0xF) - 8) * x[j]
                 + q8_0_multiple(a, 4 + j / 4) * ((w[2 + j] >> 4) - 8) * x[j + 16];
        acc = fmaf(half_to_float(load_u16(w)) * load_f32(a), (float)t, acc);
    }
    return acc;
}

/*
 * Q4_K weights by Q8_K activations. Per block one exact int32, T = Σ_g scale_g·m_g·(Σ q·a over group g) over its 8
 * groups (a group is a chunk; |T| ≤ 256·15·127·63·16 < 2^31), times d_a·d into one float; the mins likewise, M =
 * Σ_g min_g·m_g·(sum of group g's activations, from the two 16-sums), times d_a·dmin into a second float that is
 * subtracted at the end.
 */
static float dot_q4_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f, mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q4_K_BLOCK, a += Q8_K_BYTES) {
        float da = load_f32(a);
        uint32_t sc[2], mn[2];
        q4_k_scales(w + 4, sc, mn);
        const int8_t *x = (const int8_t *)(a + Q8_K_QS);
        int32_t t = 0, min_sum = 0;
        for (int g = 0; g < 8; g++) {
            int32_t products = 0;
            for (int j = 0; j < 32; j++) products += ((w[16 + 32 * (g / 2) + j] >> 4 * (g % 2)) & 0xF) * x[32 * g + j];
            int32_t scale = ((sc[g / 4] >> 8 * (g % 4)) & 0xFF) * multiple(a, g);
            int32_t min = ((mn[g / 4] >> 8 * (g % 4)) & 0xFF) * multiple(a, g);
            t += scale * products;
            min_sum += min * (load_i16(a + Q8_K_SUMS + 4 * g) + load_i16(a + Q8_K_SUMS + 4 * g + 2));
        }
        acc = fmaf(da * half_to_float(load_u16(w)), (float)t, acc);
        mins = fmaf(da * half_to_float(load_u16(w + 2)), (float)min_sum, mins);
    }
    return acc - mins;
}

/*
 * Q6_K weights (q − 32, 6 bits: 4 in ql, 2 in qh) by Q8_K activations; chunk c of a block holds groups 2c (its
 * first 16 weights) and 2c + 1, each with a signed 8-bit scale. Per block one exact int32, T = Σ_g s_g·m_g·Σ
 * (q − 32)·a over group g (|T| ≤ 256·32·127·128·16 = 2,130,706,432 < 2^31), times d_a·d into one float, as Q4_K.
 */
static float dot_q6_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q6_K_BLOCK, a += Q8_K_BYTES) {
        const int8_t *scales = (const int8_t *)(w + 192), *x = (const int8_t *)(a + Q8_K_QS);
        int32_t t = 0;
        for (int c = 0; c < 8; c++) {
            int h = c / 4, run = c % 4;
            for (int half_chunk = 0; half_chunk < 2; half_chunk++) {
                int32_t products = 0;
                for (int j = 16 * half_chunk; j < 16 * half_chunk + 16; j++) {
                    int low = (w[64 * h + 32 * (run & 1) + j] >> 4 * (run >> 1)) & 0xF;
                    int high = (w[128 + 32 * h + j] >> 2 * run) & 3;
                    products += ((low | high << 4) - 32) * x[32 * c + j];
                }
                t += scales[2 * c + half_chunk] * multiple(a, c) * products;
            }
        }
        acc = fmaf(load_f32(a) * half_to_float(load_u16(w + 208)), (float)t, acc);
    }
    return acc;
}

/* Q5_K weights by Q8_K activations: Q4_K's arithmetic with a fifth bit per weight, bit g of qh[j]. */
static float dot_q5_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc[8] = {0}, mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q5_K_BLOCK, a += Q8_K_BYTES) {
        float da = load_f32(a);
        uint32_t sc[2], mn[2];
        q4_k_scales(w + 4, sc, mn);
        int32_t lanes[8] = {0}, min_sum = 0;
        for (int g = 0; g < 8; g++) {
            int8_t q[32];
            for (int j = 0; j < 32; j++) {
                int low = (w[48 + 32 * (g / 2) + j] >> 4 * (g % 2)) & 0xF, high = (w[16 + j] >> g) & 1;
                q[j] = (int8_t)(low | high << 4);
            }
            int32_t scale = ((sc[g / 4] >> 8 * (g % 4)) & 0xFF) * multiple(a, g);
            int32_t min = ((mn[g / 4] >> 8 * (g % 4)) & 0xFF) * multiple(a, g);
            chunk_lanes(q, (const int8_t *)(a + Q8_K_QS + 32 * g), scale, scale, lanes);
            min_sum += min * (load_i16(a + Q8_K_SUMS + 4 * g) + load_i16(a + Q8_K_SUMS + 4 * g + 2));
        }
        add_lanes(acc, da * half_to_float(load_u16(w)), lanes);
        mins = fmaf(da * half_to_float(load_u16(w + 2)), (float)min_sum, mins);
    }
    return sum_lanes(acc) - mins;
}

/*
 * Q2_K weights (2 bits: weight 128h + 32s + l is bits 2s..2s + 1 of qs[32h + l]) by Q8_K activations; 16 groups of
 * 16, each a 4-bit scale and a 4-bit min. Per block one exact int32, T = Σ_g scale_g·m_g·Σ q·a over group g
 * (|T| ≤ 256·3·127·15·16), times d_a·d into one float, as Q4_K; the mins' term is Σ_g min_g·m_g·(the activations'
 * sum of group g).
 */
static float dot_q2_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f, mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q2_K_BLOCK, a += Q8_K_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_K_QS);
        float da = load_f32(a);
        int32_t t = 0, min_sum = 0;
        for (int g = 0; g < 16; g++) {
            int c = g / 2, products = 0;
            for (int j = 16 * (g % 2); j < 16 * (g % 2) + 16; j++)
                products += ((w[16 + 32 * (c / 4) + j] >> 2 * (c % 4)) & 3) * x[32 * c + j];
            t += (w[g] & 0xF) * multiple(a, c) * products;
            min_sum += (w[g] >> 4) * multiple(a, c) * load_i16(a + Q8_K_SUMS + 2 * g);
        }
        acc = fmaf(da * half_to_float(load_u16(w + 80)), (float)t, acc);
        mins = fmaf(da * half_to_float(load_u16(w + 82)), (float)min_sum, mins);
    }
    return acc - mins;
}

/*
 * Q3_K weights (2 low bits as Q2_K's, minus 4 where the weight's bit in hmask is clear: −4..3) by Q8_K activations;
 * 16 groups of 16 with signed 6-bit scales. Per block one exact int32, T = Σ_g scale_g·m_g·Σ q·a over group g
 * (|T| ≤ 256·4·127·32·16), times d_a·d into one float, as Q2_K.
 */
static float dot_q3_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q3_K_BLOCK, a += Q8_K_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_K_QS);
        int16_t scales[16];
        q3_k_scales(w + 96, scales);
        int32_t t = 0;
        for (int g = 0; g < 16; g++) {
            int c = g / 2, products = 0;
            for (int j = 16 * (g % 2); j < 16 * (g % 2) + 16; j++) {
                int low = (w[32 + 32 * (c / 4) + j] >> 2 * (c % 4)) & 3, high = (w[j] >> c) & 1;
                products += (high ? low : low - 4) * x[32 * c + j];
            }
            t += scales[g] * multiple(a, c) * products;
        }
        acc = fmaf(load_f32(a) * half_to_float(load_u16(w + 108)), (float)t, acc);
    }
    return acc;
}

/*
 * IQ2_XXS weights by Q8_K activations. A weight is d·(2s + 1)/8 times a signed grid magnitude (8, 25 or 43), all
 * exact: the group's integer scale is 2s + 1 and the block's float scale d_a·(d/8).
 */
static float dot_iq2_xxs(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc[8] = {0};
    for (int b = 0; b < blocks; b++, w += IQ2_XXS_BLOCK, a += Q8_K_BYTES) {
        int32_t lanes[8] = {0};
        for (int g = 0; g < 8; g++) {
            uint32_t grid = load_u32(w + 2 + 8 * g), signs = load_u32(w + 6 + 8 * g);
            int8_t q[32];
            for (int j = 0; j < 32; j++) {
                uint64_t point = iq2xxs_grid[(grid >> 8 * (j / 8)) & 0xFF];
                uint64_t sign = iq2_signs[(signs >> 7 * (j / 8)) & 0x7F];
                q[j] = (int8_t)((int)((point >> 8 * (j % 8)) & 0xFF) * (int8_t)((sign >> 8 * (j % 8)) & 0xFF));
            }
            int32_t scale = (2 * (int32_t)(signs >> 28) + 1) * multiple(a, g);
            chunk_lanes(q, (const int8_t *)(a + Q8_K_QS + 32 * g), scale, scale, lanes);
        }
        add_lanes(acc, load_f32(a) * (0.125f * half_to_float(load_u16(w))), lanes);
    }
    return sum_lanes(acc);
}

FS_MATMUL(q8_0, scalar, 32, Q8_0_BYTES, dot_q8_0)
FS_MATMUL(q4_0, scalar, 32, Q8_0_BYTES, dot_q4_0)
FS_MATMUL(q4_k, scalar, 256, Q8_K_BYTES, dot_q4_k)
FS_MATMUL(q6_k, scalar, 256, Q8_K_BYTES, dot_q6_k)
FS_MATMUL(q5_k, scalar, 256, Q8_K_BYTES, dot_q5_k)
FS_MATMUL(q2_k, scalar, 256, Q8_K_BYTES, dot_q2_k)
FS_MATMUL(q3_k, scalar, 256, Q8_K_BYTES, dot_q3_k)
FS_MATMUL(iq2_xxs, scalar, 256, Q8_K_BYTES, dot_iq2_xxs)

FS_MATMUL_X16(q4_k, scalar, 256, Q8_K_BYTES, Q4_K_X16_BLOCK, q4_k_x16_portable)
FS_MATMUL_X16(q4_0, scalar, 32, Q8_0_BYTES, Q4_0_X16_BLOCK, q4_0_x16_portable)
FS_MATMUL_X16(q8_0, scalar, 32, Q8_0_BYTES, Q8_0_X16_BLOCK, q8_0_x16_portable)
FS_MATMUL_X16(q6_k, scalar, 256, Q8_K_BYTES, Q6_K_X16_BLOCK, q6_k_x16_portable)
FS_MATMUL_X16(q2_k, scalar, 256, Q8_K_BYTES, Q2_K_X16_BLOCK, q2_k_x16_portable)
FS_MATMUL_X16(q3_k, scalar, 256, Q8_K_BYTES, Q3_K_X16_BLOCK, q3_k_x16_portable)
