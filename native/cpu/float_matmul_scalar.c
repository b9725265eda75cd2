/*
 * The float matmuls (BF16, F16, F32 weights) in portable C, one value at a time: the scalar variant, and on aarch64
 * also the neon one (compiled twice, CMakeLists.txt). They compute the order of float_matmul.h; BF16's products go
 * as vdpbf16ps adds them (Intel's SDM, checked against this project's Zen 5 on tens of millions of random and edge
 * inputs: native/cpu/README.md), so every variant, with or without AVX512-BF16, gives the same floats.
 */
#include <float.h>
#include <math.h>

#include "blocks.h"
#include "float_matmul.h"

#if !defined(FS_VARIANT)
#error "build with -DFS_VARIANT=scalar or neon"
#endif
#define FS_CAT(a, b) a##_##b
#define FS_NAME(f, v) FS_CAT(f, v)
#define FS_EXPORT(f) FS_NAME(f, FS_VARIANT)

static inline uint32_t bits_of_float(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* A bf16 as the instruction reads it: a denormal is a zero of its sign (DAZ). */
static inline float bf16_operand(uint16_t h) {
    if ((h & 0x7F80) == 0) h &= 0x8000;
    return float_of_bits((uint32_t)h << 16);
}

/*
 * Whether acc + p, whose rounding to float (on the denormal grid, as fmaf rounds) is ±2^-126, is below 2^-126 in
 * magnitude after rounding with an unbounded exponent, x86's tininess test for FTZ: the exact sum is then below
 * 2^-126 − 2^-151 (the midpoint under 2^-126 of that rounding; a tie goes to 2^-126, whose mantissa is even).
 * p, a product of two bf16, and acc are exact in double; s + e is the exact sum (TwoSum), so the test is exact.
 */
static int rounds_below_min_normal(float acc, double p, float rounded) {
    double a = acc, s = a + p, bb = s - a, e = (a - (s - bb)) + (p - bb);
    if (rounded < 0) {
        s = -s;
        e = -e;
    }
    const double threshold = 0x1p-126 - 0x1p-151;
    return s < threshold || (s == threshold && e < 0);
}

/* acc + a·b as vdpbf16ps adds one product: rounded to nearest even, then flushed to zero below 2^-126 (FTZ). */
static inline float bf16_step(float acc, float a, float b) {
    float r = fmaf(a, b, acc);
    float magnitude = fabsf(r);
    if (magnitude < FLT_MIN) return copysignf(0.0f, r);
    if (magnitude == FLT_MIN && rounds_below_min_normal(acc, (double)a * b, r)) return copysignf(0.0f, r);
    return r;
}

static float dot_bf16(const uint8_t *w, const uint8_t *x, int k) {
    float acc[FM_LANES] = {0};
    for (int c = 0; c * FM_BF16_CHUNK < k; c++) {
        for (int l = 0; l < FM_LANES; l++) {
            int odd = c * FM_BF16_CHUNK + 2 * l + 1, even = odd - 1;
            float wo = odd < k ? bf16_operand(load_u16(w + 2 * odd)) : 0.0f;
            float xo = odd < k ? bf16_operand(load_u16(x + 2 * odd)) : 0.0f;
            float we = even < k ? bf16_operand(load_u16(w + 2 * even)) : 0.0f;
            float xe = even < k ? bf16_operand(load_u16(x + 2 * even)) : 0.0f;
            acc[l] = bf16_step(bf16_step(acc[l], wo, xo), we, xe);
        }
    }
    return fm_sum_lanes(acc);
}

static float dot_f16(const uint8_t *w, const uint8_t *x, int k) {
    float chains[FM_CHAINS * FM_LANES] = {0};
    for (int c = 0; c * FM_HALF_CHUNK < k; c++) {
        float *acc = chains + (c % FM_CHAINS) * FM_LANES;
        for (int l = 0; l < FM_LANES; l++) {
            int j = c * FM_HALF_CHUNK + l;
            float wj = j < k ? half_to_float(load_u16(w + 2 * j)) : 0.0f;
            float xj = j < k ? half_to_float(load_u16(x + 2 * j)) : 0.0f;
            acc[l] = fmaf(wj, xj, acc[l]);
        }
    }
    return fm_sum_chains(chains);
}

static float dot_f32(const uint8_t *w, const uint8_t *x, int k) {
    float chains[FM_CHAINS * FM_LANES] = {0};
    for (int c = 0; c * FM_HALF_CHUNK < k; c++) {
        float *acc = chains + (c % FM_CHAINS) * FM_LANES;
        for (int l = 0; l < FM_LANES; l++) {
            int j = c * FM_HALF_CHUNK + l;
            float wj = j < k ? load_f32(w + 4 * j) : 0.0f;
            float xj = j < k ? load_f32(x + 4 * j) : 0.0f;
            acc[l] = fmaf(wj, xj, acc[l]);
        }
    }
    return fm_sum_chains(chains);
}

FS_API void FS_EXPORT(fs_convert_bf16)(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t i = 0; i < count; i++) {
        uint16_t h = fm_float_to_bf16(bits_of_float(x[i]));
        memcpy(out + 2 * i, &h, sizeof h);
    }
}

FS_API void FS_EXPORT(fs_convert_f16)(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t i = 0; i < count; i++) {
        uint16_t h = float_to_half(x[i]);
        memcpy(out + 2 * i, &h, sizeof h);
    }
}

FS_API void FS_EXPORT(fs_convert_f32)(const float *x, void *y, int64_t count) {
    memcpy(y, x, (size_t)count * sizeof(float));
}

#define FLOAT_MATMUL(F, ACT_BYTES)                                                                                   \
    FS_API void FS_EXPORT(fs_matmul_##F)(const void *w, int64_t row_bytes, int row_from, int row_to,                 \
                                         const void *act, int act_rows, int k, float *out, int64_t out_stride) {     \
        for (int i = row_from; i < row_to; i++) {                                                                    \
            const uint8_t *row = (const uint8_t *)w + i * row_bytes;                                                 \
            for (int r = 0; r < act_rows; r++) {                                                                     \
                out[r * out_stride + i] = dot_##F(row, (const uint8_t *)act + (int64_t)r * k * (ACT_BYTES), k);      \
            }                                                                                                        \
        }                                                                                                            \
    }

FLOAT_MATMUL(bf16, 2)
FLOAT_MATMUL(f16, 2)
FLOAT_MATMUL(f32, 4)
