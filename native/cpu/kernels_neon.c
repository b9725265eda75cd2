/*
 * The aarch64 variant "neon", compiled with -march=armv8.2-a+dotprod (CMakeLists.txt) and run where the CPU has the
 * dot product extension (cpu.c: HWCAP_ASIMDDP): int8 products by sdot (vdotq_s32: four s8 × s8 products into an
 * int32 lane). It computes exactly the integers and float operations of kernels_scalar.c: a 32-weight chunk's
 * eight lanes are two 128-bit registers, its bytes 0..15 (lanes 0..3) and 16..31 (lanes 4..7), and lane l of a
 * register sums bytes 4l..4l + 3 as the scalar lanes do. sdot sums in int32 without saturating, so a chunk's
 * weights are formed as signed bytes (offset and sign included) and each dot is multiplied by its integer scale.
 * The float lanes are acc = vfmaq(acc, (float) lane, D): one fused multiply-add per block per lane, as fmaf (Q8_0,
 * Q4_0, Q4_K, Q6_K and Q2_K: one integer per block, its lanes summed, and one fmaf).
 */
#include <arm_neon.h>
#include <math.h>

#include "repacked.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "build kernels_neon.c with -march=armv8.2-a+dotprod"
#endif

/* An IEEE half to float (exact) by the FPU's conversion. */
static inline float half(const uint8_t *p) {
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(load_u16(p)))), 0);
}

static inline int8x16_t load_s8(const uint8_t *p) {
    return vld1q_s8((const int8_t *)p);
}

/* A block's eight int32 lane sums: lanes 0..3 in lo, 4..7 in hi. */
typedef struct {
    int32x4_t lo, hi;
} lanes8;

static inline lanes8 no_lanes(void) {
    return (lanes8){vdupq_n_s32(0), vdupq_n_s32(0)};
}

/* lanes + scale_lo·(w_lo · a_lo) and scale_hi·(w_hi · a_hi), per lane: one chunk's 32 products. */
static inline lanes8 add_chunk(lanes8 lanes, int8x16_t w_lo, int8x16_t w_hi, const uint8_t *a, int32_t scale_lo,
                               int32_t scale_hi) {
    const int32x4_t zero = vdupq_n_s32(0);
    lanes.lo = vmlaq_n_s32(lanes.lo, vdotq_s32(zero, w_lo, load_s8(a)), scale_lo);
    lanes.hi = vmlaq_n_s32(lanes.hi, vdotq_s32(zero, w_hi, load_s8(a + 16)), scale_hi);
    return lanes;
}

/* A row's eight float accumulators. */
typedef struct {
    float32x4_t lo, hi;
} floats8;

static inline floats8 no_floats(void) {
    return (floats8){vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
}

/* acc + d · (float) lanes, per lane: the fmaf of kernels_scalar.c's add_lanes. */
static inline floats8 add_lanes(floats8 acc, float d, lanes8 lanes) {
    float32x4_t dv = vdupq_n_f32(d);
    acc.lo = vfmaq_f32(acc.lo, vcvtq_f32_s32(lanes.lo), dv);
    acc.hi = vfmaq_f32(acc.hi, vcvtq_f32_s32(lanes.hi), dv);
    return acc;
}

static inline float sum_floats(floats8 acc) {
    float v[8];
    vst1q_f32(v, acc.lo);
    vst1q_f32(v + 4, acc.hi);
    return sum_lanes(v);
}

/* The largest |x| of 32 floats (maxNum, as the scalar fmaxf and `>`: a NaN never wins). */
static inline float abs_max32(const float *x) {
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int v = 0; v < 8; v++) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + 4 * v)));
    return vmaxnmvq_f32(m);
}

/*
 * 32 floats, each group of 4 x[4g..4g + 3] times id[g], rounded to the nearest integer, ties to even (as lrintf),
 * to 32 int8 at q in order.
 */
static inline void quantize32(const float *x, const float id[8], uint8_t *q) {
    for (int h = 0; h < 2; h++) {
        int16x8_t pairs[2];
        for (int p = 0; p < 2; p++) {
            const float *from = x + 16 * h + 8 * p;
            int32x4_t i0 = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(from), id[4 * h + 2 * p]));
            int32x4_t i1 = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(from + 4), id[4 * h + 2 * p + 1]));
            pairs[p] = vcombine_s16(vqmovn_s32(i0), vqmovn_s32(i1));
        }
        vst1q_s8((int8_t *)q + 16 * h, vcombine_s8(vqmovn_s16(pairs[0]), vqmovn_s16(pairs[1])));
    }
}

FS_API void fs_quantize_q8_0_neon(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t b = 0; b < count / 32; b++, x += 32, out += Q8_0_BYTES) {
        float scaling[8];
        q8_0_steps(x, out, scaling);
        quantize32(x, scaling, out + Q8_0_QS);
    }
}

FS_API void fs_quantize_q8_k_neon(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t b = 0; b < count / 256; b++, x += 256, out += Q8_K_BYTES) {
        float chunk_max[8], amax = 0.0f;
        for (int c = 0; c < 8; c++) {
            chunk_max[c] = abs_max32(x + 32 * c);
            amax = fmaxf(amax, chunk_max[c]);
        }
        float d = amax / 2032.0f;
        memcpy(out, &d, sizeof d);
        for (int c = 0; c < 8; c++) {
            int m = chunk_multiple(chunk_max[c], amax);
            float id = amax != 0.0f ? 2032.0f / (amax * (float)m) : 0.0f;
            quantize32(x + 32 * c, (const float[8]){id, id, id, id, id, id, id, id}, out + Q8_K_QS + 32 * c);
            store_multiple(out, c, m);
        }
        for (int g = 0; g < 16; g++) { /* |sum| ≤ 16·127: no wrap */
            int16_t sum = vaddlvq_s8(load_s8(out + Q8_K_QS + 16 * g));
            memcpy(out + Q8_K_SUMS + 2 * g, &sum, sizeof sum);
        }
    }
}

/* The multiple of chunk c of the Q8_K activation block a. */
static inline int32_t multiple(const uint8_t *a, int c) {
    return load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
}

/* The multiples of groups 0..3 (lo) and 4..7 (hi) of the Q8_0 activation block a, as the lanes of sdot's sums. */
static inline lanes8 q8_0_multiples(const uint8_t *a) {
    int16x8_t m = vld2q_s16((const int16_t *)(a + Q8_0_MULTIPLES)).val[0]; /* each stored twice: every other */
    return (lanes8){vmovl_s16(vget_low_s16(m)), vmovl_high_s16(m)};
}

/* Q8_0: one int32 per block, its groups' dots times their multiples, summed (kernels_scalar.c). */
static float dot_q8_0(const uint8_t *w, const uint8_t *a, int blocks) {
    const int32x4_t zero = vdupq_n_s32(0);
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q8_0_BLOCK, a += Q8_0_BYTES) {
        lanes8 m = q8_0_multiples(a);
        int32x4_t t = vmulq_s32(vdotq_s32(zero, load_s8(w + 2), load_s8(a + Q8_0_QS)), m.lo);
        t = vmlaq_s32(t, vdotq_s32(zero, load_s8(w + 18), load_s8(a + Q8_0_QS + 16)), m.hi);
        acc = fmaf(half(w) * load_f32(a), (float)vaddvq_s32(t), acc);
    }
    return acc;
}

/* Q4_0: low nibbles are weights 0..15, high nibbles 16..31, each minus 8; one int32 per block (kernels_scalar.c). */
static float dot_q4_0(const uint8_t *w, const uint8_t *a, int blocks) {
    const uint8x16_t low = vdupq_n_u8(0xF);
    const int8x16_t eight = vdupq_n_s8(8);
    const int32x4_t zero = vdupq_n_s32(0);
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q4_0_BLOCK, a += Q8_0_BYTES) {
        uint8x16_t packed = vld1q_u8(w + 2);
        int8x16_t q_lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(packed, low)), eight);
        int8x16_t q_hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(packed, 4)), eight);
        lanes8 m = q8_0_multiples(a);
        int32x4_t t = vmulq_s32(vdotq_s32(zero, q_lo, load_s8(a + Q8_0_QS)), m.lo);
        t = vmlaq_s32(t, vdotq_s32(zero, q_hi, load_s8(a + Q8_0_QS + 16)), m.hi);
        acc = fmaf(half(w) * load_f32(a), (float)vaddvq_s32(t), acc);
    }
    return acc;
}

/*
 * Q4_K's and Q5_K's min term, Σ_g min_g·m_g·(sum16[2g] + sum16[2g + 1]) in int32, from the packed mins (q4_k_scales)
 * and the activation block's sums and chunk multiples.
 */
static inline int32_t k_min_sum(const uint32_t mn[2], const uint8_t *a) {
    uint8x8_t mins8 = vcreate_u8((uint64_t)mn[1] << 32 | mn[0]);
    int16x8_t mins = vmulq_s16(vreinterpretq_s16_u16(vmovl_u8(mins8)),
                               vld1q_s16((const int16_t *)(a + Q8_K_CHUNK_MULTIPLES)));
    int16x8_t group_sums = vpaddq_s16(vld1q_s16((const int16_t *)(a + Q8_K_SUMS)),
                                      vld1q_s16((const int16_t *)(a + Q8_K_SUMS + 16))); /* ≤ 32·127 */
    int32x4_t products = vmull_s16(vget_low_s16(mins), vget_low_s16(group_sums)); /* mins ≤ 63·16 */
    products = vmlal_s16(products, vget_high_s16(mins), vget_high_s16(group_sums));
    return vaddvq_s32(products);
}

/* Group g's integer scale: its 6-bit scale from the packed scales (q4_k_scales) times its chunk's multiple. */
static inline int32_t k_scale(const uint32_t sc[2], const uint8_t *a, int g) {
    return (int32_t)((sc[g / 4] >> 8 * (g % 4)) & 0xFF) * multiple(a, g);
}

static float dot_q4_k(const uint8_t *w, const uint8_t *a, int blocks) {
    const uint8x16_t low = vdupq_n_u8(0xF);
    float acc = 0.0f, mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q4_K_BLOCK, a += Q8_K_BYTES) {
        float da = load_f32(a);
        uint32_t sc[2], mn[2];
        q4_k_scales(w + 4, sc, mn);
        lanes8 lanes = no_lanes();
        for (int p = 0; p < 4; p++) { /* groups 2p (low nibbles) and 2p + 1 (high nibbles) share 32 bytes */
            uint8x16_t q0 = vld1q_u8(w + 16 + 32 * p), q1 = vld1q_u8(w + 32 + 32 * p);
            const uint8_t *x = a + Q8_K_QS + 64 * p;
            int32_t s0 = k_scale(sc, a, 2 * p), s1 = k_scale(sc, a, 2 * p + 1);
            lanes = add_chunk(lanes, vreinterpretq_s8_u8(vandq_u8(q0, low)), vreinterpretq_s8_u8(vandq_u8(q1, low)),
                              x, s0, s0);
            lanes = add_chunk(lanes, vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), vreinterpretq_s8_u8(vshrq_n_u8(q1, 4)),
                              x + 32, s1, s1);
        }
        /* The block's one integer T (kernels_scalar.c): the lanes' sum, exact in any order. */
        acc = fmaf(da * half(w), (float)vaddvq_s32(vaddq_s32(lanes.lo, lanes.hi)), acc);
        mins = fmaf(da * half(w + 2), (float)k_min_sum(mn, a), mins);
    }
    return acc - mins;
}

/* Q5_K: Q4_K's nibbles with a fifth bit, bit g of qh[j] for weight j of group g. */
static float dot_q5_k(const uint8_t *w, const uint8_t *a, int blocks) {
    const uint8x16_t low = vdupq_n_u8(0xF), bit4 = vdupq_n_u8(0x10);
    floats8 acc = no_floats();
    float mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q5_K_BLOCK, a += Q8_K_BYTES) {
        float da = load_f32(a);
        uint32_t sc[2], mn[2];
        q4_k_scales(w + 4, sc, mn);
        /* qh shifted right by 2p puts group 2p's bit at bit 0 and group 2p + 1's at bit 1. */
        uint8x16_t h0 = vld1q_u8(w + 16), h1 = vld1q_u8(w + 32);
        lanes8 lanes = no_lanes();
        for (int p = 0; p < 4; p++) {
            uint8x16_t q0 = vld1q_u8(w + 48 + 32 * p), q1 = vld1q_u8(w + 64 + 32 * p);
            const uint8_t *x = a + Q8_K_QS + 64 * p;
            int32_t s0 = k_scale(sc, a, 2 * p), s1 = k_scale(sc, a, 2 * p + 1);
            uint8x16_t even0 = vorrq_u8(vandq_u8(q0, low), vandq_u8(vshlq_n_u8(h0, 4), bit4));
            uint8x16_t even1 = vorrq_u8(vandq_u8(q1, low), vandq_u8(vshlq_n_u8(h1, 4), bit4));
            uint8x16_t odd0 = vorrq_u8(vshrq_n_u8(q0, 4), vandq_u8(vshlq_n_u8(h0, 3), bit4));
            uint8x16_t odd1 = vorrq_u8(vshrq_n_u8(q1, 4), vandq_u8(vshlq_n_u8(h1, 3), bit4));
            lanes = add_chunk(lanes, vreinterpretq_s8_u8(even0), vreinterpretq_s8_u8(even1), x, s0, s0);
            lanes = add_chunk(lanes, vreinterpretq_s8_u8(odd0), vreinterpretq_s8_u8(odd1), x + 32, s1, s1);
            h0 = vshrq_n_u8(h0, 2);
            h1 = vshrq_n_u8(h1, 2);
        }
        acc = add_lanes(acc, da * half(w), lanes);
        mins = fmaf(da * half(w + 2), (float)k_min_sum(mn, a), mins);
    }
    return sum_floats(acc) - mins;
}

/*
 * Q6_K: chunk c = 4h + run takes its low nibbles from ql (bytes 64h + 32(run & 1).., the high nibbles for run ≥ 2)
 * and its top two bits from bits 2·run of qh[32h..]; the weight is that 6-bit value − 32, a signed byte. Groups 2c
 * and 2c + 1 (the chunk's halves) have their own int8 scales.
 */
static float dot_q6_k(const uint8_t *w, const uint8_t *a, int blocks) {
    const uint8x16_t low = vdupq_n_u8(0xF), top = vdupq_n_u8(0x30);
    const int8x16_t offset = vdupq_n_s8(32);
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q6_K_BLOCK, a += Q8_K_BYTES) {
        const int8_t *scales = (const int8_t *)(w + 192);
        lanes8 lanes = no_lanes();
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = w + 64 * h, *qh = w + 128 + 32 * h;
            uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16), l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
            uint8x16_t h0 = vld1q_u8(qh), h1 = vld1q_u8(qh + 16);
            uint8x16_t q[4][2] = {
                {vorrq_u8(vandq_u8(l0, low), vandq_u8(vshlq_n_u8(h0, 4), top)),
                 vorrq_u8(vandq_u8(l1, low), vandq_u8(vshlq_n_u8(h1, 4), top))},
                {vorrq_u8(vandq_u8(l2, low), vandq_u8(vshlq_n_u8(h0, 2), top)),
                 vorrq_u8(vandq_u8(l3, low), vandq_u8(vshlq_n_u8(h1, 2), top))},
                {vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(h0, top)), vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(h1, top))},
                {vorrq_u8(vshrq_n_u8(l2, 4), vandq_u8(vshrq_n_u8(h0, 2), top)),
                 vorrq_u8(vshrq_n_u8(l3, 4), vandq_u8(vshrq_n_u8(h1, 2), top))},
            };
            for (int run = 0; run < 4; run++) {
                int c = 4 * h + run;
                int32_t m = multiple(a, c);
                lanes = add_chunk(lanes, vsubq_s8(vreinterpretq_s8_u8(q[run][0]), offset),
                                  vsubq_s8(vreinterpretq_s8_u8(q[run][1]), offset), a + Q8_K_QS + 32 * c,
                                  scales[2 * c] * m, scales[2 * c + 1] * m);
            }
        }
        /* The block's one integer T (kernels_scalar.c): the lanes' sum, exact in any order. */
        acc = fmaf(load_f32(a) * half(w + 208), (float)vaddvq_s32(vaddq_s32(lanes.lo, lanes.hi)), acc);
    }
    return acc;
}

/* Q2_K: chunk c's weights are bits 2(c % 4).. of qs[32(c / 4)..]; group g has a 4-bit scale and a 4-bit min. */
static float dot_q2_k(const uint8_t *w, const uint8_t *a, int blocks) {
    const uint8x16_t three = vdupq_n_u8(3);
    float acc = 0.0f, mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q2_K_BLOCK, a += Q8_K_BYTES) {
        float da = load_f32(a);
        /* Σ_g min_g·m_g·sum16[g]: mins·multiples ≤ 15·16, sums ≤ 16·127. */
        uint8x16_t packed = vld1q_u8(w);
        int16x8_t min_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(vshrq_n_u8(packed, 4))));
        int16x8_t min_hi = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(vshrq_n_u8(packed, 4))));
        min_lo = vmulq_s16(min_lo, vld1q_s16((const int16_t *)(a + Q8_K_GROUP_MULTIPLES)));
        min_hi = vmulq_s16(min_hi, vld1q_s16((const int16_t *)(a + Q8_K_GROUP_MULTIPLES + 16)));
        int16x8_t sums_lo = vld1q_s16((const int16_t *)(a + Q8_K_SUMS));
        int16x8_t sums_hi = vld1q_s16((const int16_t *)(a + Q8_K_SUMS + 16));
        int32x4_t products = vmull_s16(vget_low_s16(min_lo), vget_low_s16(sums_lo));
        products = vmlal_s16(products, vget_high_s16(min_lo), vget_high_s16(sums_lo));
        products = vmlal_s16(products, vget_low_s16(min_hi), vget_low_s16(sums_hi));
        products = vmlal_s16(products, vget_high_s16(min_hi), vget_high_s16(sums_hi));
        int32_t min_sum = vaddvq_s32(products);
        lanes8 lanes = no_lanes();
        for (int h = 0; h < 2; h++) {
            uint8x16_t q0 = vld1q_u8(w + 16 + 32 * h), q1 = vld1q_u8(w + 32 + 32 * h);
            for (int run = 0; run < 4; run++) {
                int c = 4 * h + run;
                int32_t m = multiple(a, c);
                lanes = add_chunk(lanes, vreinterpretq_s8_u8(vandq_u8(q0, three)),
                                  vreinterpretq_s8_u8(vandq_u8(q1, three)), a + Q8_K_QS + 32 * c,
                                  (w[2 * c] & 0xF) * m, (w[2 * c + 1] & 0xF) * m);
                q0 = vshrq_n_u8(q0, 2);
                q1 = vshrq_n_u8(q1, 2);
            }
        }
        acc = fmaf(da * half(w + 80), (float)vaddvq_s32(vaddq_s32(lanes.lo, lanes.hi)), acc);
        mins = fmaf(da * half(w + 82), (float)min_sum, mins);
    }
    return acc - mins;
}

/*
 * Q3_K: Q2_K's two low bits, minus 4 where the weight's bit c of hmask[j] is clear (−4..3); 16 groups with signed
 * 6-bit scales; one int32 per block, as Q2_K.
 */
static float dot_q3_k(const uint8_t *w, const uint8_t *a, int blocks) {
    const uint8x16_t three = vdupq_n_u8(3), one = vdupq_n_u8(1);
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q3_K_BLOCK, a += Q8_K_BYTES) {
        int16_t scales[16];
        q3_k_scales(w + 96, scales);
        uint8x16_t hmask0 = vld1q_u8(w), hmask1 = vld1q_u8(w + 16);
        lanes8 lanes = no_lanes();
        for (int h = 0; h < 2; h++) {
            uint8x16_t q0 = vld1q_u8(w + 32 + 32 * h), q1 = vld1q_u8(w + 48 + 32 * h);
            for (int run = 0; run < 4; run++) {
                int c = 4 * h + run;
                int32_t m = multiple(a, c);
                /* 4 where the bit is clear: (bit ^ 1) << 2, subtracted from the two low bits. */
                uint8x16_t off0 = vshlq_n_u8(veorq_u8(vandq_u8(hmask0, one), one), 2);
                uint8x16_t off1 = vshlq_n_u8(veorq_u8(vandq_u8(hmask1, one), one), 2);
                int8x16_t w0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q0, three)), vreinterpretq_s8_u8(off0));
                int8x16_t w1 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q1, three)), vreinterpretq_s8_u8(off1));
                lanes = add_chunk(lanes, w0, w1, a + Q8_K_QS + 32 * c, scales[2 * c] * m, scales[2 * c + 1] * m);
                q0 = vshrq_n_u8(q0, 2);
                q1 = vshrq_n_u8(q1, 2);
                hmask0 = vshrq_n_u8(hmask0, 1);
                hmask1 = vshrq_n_u8(hmask1, 1);
            }
        }
        acc = fmaf(load_f32(a) * half(w + 108), (float)vaddvq_s32(vaddq_s32(lanes.lo, lanes.hi)), acc);
    }
    return acc;
}

/*
 * IQ2_XXS: per group of 32, four grid points (8 magnitudes each) times four sign patterns, as signed bytes; the
 * group's integer scale (2s + 1)·m, the block's float scale d_a·(d/8).
 */
static float dot_iq2_xxs(const uint8_t *w, const uint8_t *a, int blocks) {
    floats8 acc = no_floats();
    for (int b = 0; b < blocks; b++, w += IQ2_XXS_BLOCK, a += Q8_K_BYTES) {
        lanes8 lanes = no_lanes();
        for (int g = 0; g < 8; g++) {
            uint32_t grid = load_u32(w + 2 + 8 * g), signs = load_u32(w + 6 + 8 * g);
            int8x16_t magnitudes0 = vreinterpretq_s8_u64(
                    vcombine_u64(vcreate_u64(iq2xxs_grid[grid & 0xFF]), vcreate_u64(iq2xxs_grid[(grid >> 8) & 0xFF])));
            int8x16_t magnitudes1 = vreinterpretq_s8_u64(
                    vcombine_u64(vcreate_u64(iq2xxs_grid[(grid >> 16) & 0xFF]), vcreate_u64(iq2xxs_grid[grid >> 24])));
            int8x16_t signs0 = vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(iq2_signs[signs & 0x7F]),
                                                                 vcreate_u64(iq2_signs[(signs >> 7) & 0x7F])));
            int8x16_t signs1 = vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(iq2_signs[(signs >> 14) & 0x7F]),
                                                                 vcreate_u64(iq2_signs[(signs >> 21) & 0x7F])));
            int32_t scale = (2 * (int32_t)(signs >> 28) + 1) * multiple(a, g);
            /* Magnitudes ≤ 43 times ±1: signed bytes. */
            lanes = add_chunk(lanes, vmulq_s8(magnitudes0, signs0), vmulq_s8(magnitudes1, signs1),
                              a + Q8_K_QS + 32 * g, scale, scale);
        }
        acc = add_lanes(acc, load_f32(a) * (0.125f * half(w)), lanes);
    }
    return sum_floats(acc);
}

FS_MATMUL(q8_0, neon, 32, Q8_0_BYTES, dot_q8_0)
FS_MATMUL(q4_0, neon, 32, Q8_0_BYTES, dot_q4_0)
FS_MATMUL(q4_k, neon, 256, Q8_K_BYTES, dot_q4_k)
FS_MATMUL(q6_k, neon, 256, Q8_K_BYTES, dot_q6_k)
FS_MATMUL(q5_k, neon, 256, Q8_K_BYTES, dot_q5_k)
FS_MATMUL(q2_k, neon, 256, Q8_K_BYTES, dot_q2_k)
FS_MATMUL(q3_k, neon, 256, Q8_K_BYTES, dot_q3_k)
FS_MATMUL(iq2_xxs, neon, 256, Q8_K_BYTES, dot_iq2_xxs)

/*
 * The repacked kernels (repacked.h): 16 bytes of a 4-byte step are 4 rows × 4 weights, so one sdot against the
 * activation's 4 bytes, broadcast, sums 4 products for each of 4 rows; a group's 16 rows are 4 int32x4 per sum.
 * One activation row at a time (not yet several sharing the unpacked weights, nor prefetching: untimed on real
 * aarch64 hardware).
 */

/* 4 bytes at p as 4 int32 lanes. */
static inline int32x4_t u8x4_to_s32(const uint8_t *p) {
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(vcreate_u8(load_u32(p))))));
}

/* The activation's 4 quants at p in every 32-bit lane. */
static inline int8x16_t broadcast4(const uint8_t *p) {
    return vreinterpretq_s8_u32(vdupq_n_u32(load_u32(p)));
}

static void q4_k_x16_neon(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    const uint8x16_t low = vdupq_n_u8(0xF);
    float32x4_t acc[4], mins[4];
    for (int g = 0; g < 4; g++) acc[g] = vdupq_n_f32(0.0f), mins[g] = vdupq_n_f32(0.0f);
    for (int b = 0; b < blocks; b++, gb += Q4_K_X16_BLOCK, a += Q8_K_BYTES) {
        const uint8_t *x = a + Q8_K_QS;
        int32x4_t t[4], m[4];
        for (int g = 0; g < 4; g++) t[g] = vdupq_n_s32(0), m[g] = vdupq_n_s32(0);
        for (int p = 0; p < 4; p++) {
            int32x4_t lo[4], hi[4];
            for (int g = 0; g < 4; g++) lo[g] = vdupq_n_s32(0), hi[g] = vdupq_n_s32(0);
            for (int l = 0; l < 8; l++) {
                int8x16_t x_lo = broadcast4(x + 64 * p + 4 * l), x_hi = broadcast4(x + 64 * p + 32 + 4 * l);
                for (int g = 0; g < 4; g++) { /* nibbles 0..15 are valid int8 */
                    uint8x16_t w = vld1q_u8(gb + Q4_K_X16_QS + 512 * p + 64 * l + 16 * g);
                    lo[g] = vdotq_s32(lo[g], vreinterpretq_s8_u8(vandq_u8(w, low)), x_lo);
                    hi[g] = vdotq_s32(hi[g], vreinterpretq_s8_u8(vshrq_n_u8(w, 4)), x_hi);
                }
            }
            for (int h = 0; h < 2; h++) {
                int c = 2 * p + h;
                int32_t multiple = load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
                int32_t min_term = multiple * (load_i16(a + Q8_K_SUMS + 4 * c) + load_i16(a + Q8_K_SUMS + 4 * c + 2));
                for (int g = 0; g < 4; g++) {
                    int32x4_t scale = vmulq_n_s32(u8x4_to_s32(gb + Q4_K_X16_SCALES + 16 * c + 4 * g), multiple);
                    t[g] = vmlaq_s32(t[g], h ? hi[g] : lo[g], scale);
                    m[g] = vmlaq_n_s32(m[g], u8x4_to_s32(gb + Q4_K_X16_MINS + 16 * c + 4 * g), min_term);
                }
            }
        }
        float da = load_f32(a);
        for (int g = 0; g < 4; g++) {
            float32x4_t d = vmulq_n_f32(vld1q_f32((const float *)(gb + Q4_K_X16_D) + 4 * g), da);
            float32x4_t dmin = vmulq_n_f32(vld1q_f32((const float *)(gb + Q4_K_X16_DMIN) + 4 * g), da);
            acc[g] = vfmaq_f32(acc[g], vcvtq_f32_s32(t[g]), d);
            mins[g] = vfmaq_f32(mins[g], vcvtq_f32_s32(m[g]), dmin);
        }
    }
    for (int g = 0; g < 4; g++) vst1q_f32(out + 4 * g, vsubq_f32(acc[g], mins[g]));
}

static void q4_0_x16_neon(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    const uint8x16_t low = vdupq_n_u8(0xF);
    const int8x16_t eight = vdupq_n_s8(8);
    float32x4_t acc[4];
    for (int g = 0; g < 4; g++) acc[g] = vdupq_n_f32(0.0f);
    for (int b = 0; b < blocks; b++, gb += Q4_0_X16_BLOCK, a += Q8_0_BYTES) {
        int32x4_t t[4];
        for (int g = 0; g < 4; g++) t[g] = vdupq_n_s32(0);
        for (int l = 0; l < 4; l++) { /* low nibbles: activation group l, high: 4 + l */
            int8x16_t x_lo = broadcast4(a + Q8_0_QS + 4 * l), x_hi = broadcast4(a + Q8_0_QS + 16 + 4 * l);
            int32_t m_lo = q8_0_multiple(a, l), m_hi = q8_0_multiple(a, 4 + l);
            for (int g = 0; g < 4; g++) { /* q − 8 as signed bytes: T directly */
                uint8x16_t w = vld1q_u8(gb + Q4_0_X16_QS + 64 * l + 16 * g);
                int8x16_t q_lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(w, low)), eight);
                int8x16_t q_hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(w, 4)), eight);
                t[g] = vmlaq_n_s32(t[g], vdotq_s32(vdupq_n_s32(0), q_lo, x_lo), m_lo);
                t[g] = vmlaq_n_s32(t[g], vdotq_s32(vdupq_n_s32(0), q_hi, x_hi), m_hi);
            }
        }
        float da = load_f32(a);
        for (int g = 0; g < 4; g++) {
            float32x4_t d = vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(gb + Q4_0_X16_D + 8 * g)));
            acc[g] = vfmaq_f32(acc[g], vcvtq_f32_s32(t[g]), vmulq_n_f32(d, da));
        }
    }
    for (int g = 0; g < 4; g++) vst1q_f32(out + 4 * g, acc[g]);
}

/* Q8_0: a step is activation group l, its 4 quants against 4 rows' 4 signed weights per sdot, times m_l. */
static void q8_0_x16_neon(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    float32x4_t acc[4];
    for (int g = 0; g < 4; g++) acc[g] = vdupq_n_f32(0.0f);
    for (int b = 0; b < blocks; b++, gb += Q8_0_X16_BLOCK, a += Q8_0_BYTES) {
        int32x4_t t[4];
        for (int g = 0; g < 4; g++) t[g] = vdupq_n_s32(0);
        for (int l = 0; l < 8; l++) {
            int8x16_t x = broadcast4(a + Q8_0_QS + 4 * l);
            int32_t m = q8_0_multiple(a, l);
            for (int g = 0; g < 4; g++)
                t[g] = vmlaq_n_s32(t[g], vdotq_s32(vdupq_n_s32(0), load_s8(gb + Q8_0_X16_QS + 64 * l + 16 * g), x), m);
        }
        float da = load_f32(a);
        for (int g = 0; g < 4; g++) {
            float32x4_t d = vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(gb + Q8_0_X16_D + 8 * g)));
            acc[g] = vfmaq_f32(acc[g], vcvtq_f32_s32(t[g]), vmulq_n_f32(d, da));
        }
    }
    for (int g = 0; g < 4; g++) vst1q_f32(out + 4 * g, acc[g]);
}

FS_MATMUL_X16(q4_k, neon, 256, Q8_K_BYTES, Q4_K_X16_BLOCK, q4_k_x16_neon)
FS_MATMUL_X16(q4_0, neon, 32, Q8_0_BYTES, Q4_0_X16_BLOCK, q4_0_x16_neon)
FS_MATMUL_X16(q8_0, neon, 32, Q8_0_BYTES, Q8_0_X16_BLOCK, q8_0_x16_neon)

/* Q6_K, Q2_K and Q3_K: the portable kernels (repacked.h) for now. */
FS_MATMUL_X16(q6_k, neon, 256, Q8_K_BYTES, Q6_K_X16_BLOCK, q6_k_x16_portable)
FS_MATMUL_X16(q2_k, neon, 256, Q8_K_BYTES, Q2_K_X16_BLOCK, q2_k_x16_portable)
FS_MATMUL_X16(q3_k, neon, 256, Q8_K_BYTES, Q3_K_X16_BLOCK, q3_k_x16_portable)
