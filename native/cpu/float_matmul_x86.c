/*
 * The float matmuls (BF16, F16, F32 weights) of the x86 variants, compiled once per variant as kernels_x86.c is
 * (CMakeLists.txt). They compute the order of float_matmul.h, as float_matmul_scalar.c does, bit for bit:
 *   BF16 on a CPU with AVX512-BF16 (the avx512 variant, checked at run time: Ice Lake has AVX-512 VNNI without it):
 *        vdpbf16ps, 32 products per instruction, one to four activation rows per weight row loaded;
 *   BF16 elsewhere: the same products as two float FMAs per pair (exact products, one rounding each) with MXCSR's
 *        DAZ and FTZ set around the loop, which is what vdpbf16ps does with its own rounding mode;
 *   F16 (activations as f16, as llama.cpp's) and F32: F16C conversions and float FMAs, no MXCSR change.
 */
#include <immintrin.h>

#include "blocks.h"
#include "float_matmul.h"

#if !defined(FS_VARIANT)
#error "build with -DFS_VARIANT=avx2, avx512 or avxvnni"
#endif
#define FS_CAT(a, b) a##_##b
#define FS_NAME(f, v) FS_CAT(f, v)
#define FS_EXPORT(f) FS_NAME(f, FS_VARIANT)

/* Bytes ahead of a decode's weight loads to prefetch: rows lie back to back, so it runs on into the next rows. */
#define PREFETCH_AHEAD 1024

/* MXCSR's flush-to-zero (results) and denormals-are-zero (operands) bits. */
#define MXCSR_FTZ_DAZ 0x8040u

static inline __m256i load256(const uint8_t *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

/* The 16 lanes lo (0..7), hi (8..15) summed in fm_sum_lanes's order, in registers. */
static inline float sum_lanes_256(__m256 lo, __m256 hi) {
    __m256 h = _mm256_add_ps(lo, hi);
    __m128 w = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    __m128 t = _mm_add_ps(w, _mm_movehl_ps(w, w));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

/* Four chains, each a lo and a hi half, summed as fm_sum_chains does. */
static inline float sum_chains_256(const __m256 *lo, const __m256 *hi) {
    return sum_lanes_256(_mm256_add_ps(_mm256_add_ps(lo[0], lo[1]), _mm256_add_ps(lo[2], lo[3])),
                         _mm256_add_ps(_mm256_add_ps(hi[0], hi[1]), _mm256_add_ps(hi[2], hi[3])));
}

/*
 * Sets MXCSR to csr with the eight accumulators as operands, so that no FMA moves across it (they depend on its
 * outputs, or it on theirs); csr is read from memory, as vldmxcsr takes it.
 */
#define SET_MXCSR(csr, a, b)                                                                                         \
    __asm__ volatile("vldmxcsr %8"                                                                                   \
                     : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(b[0]), "+x"(b[1]), "+x"(b[2]),       \
                       "+x"(b[3])                                                                                    \
                     : "m"(csr))

/* One chunk of 32 bf16 pairs: lane l of lo (hi) takes pair l (8 + l): the odd value's product, then the even's. */
static inline void bf16_chunk_fma(__m256 *lo, __m256 *hi, const uint8_t *w, const uint8_t *x) {
    const __m256i high = _mm256_set1_epi32((int)0xFFFF0000u);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m256i wv = load256(w + 32 * h), xv = load256(x + 32 * h);
        __m256 *acc = h == 0 ? lo : hi;
        *acc = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(wv, high)),
                               _mm256_castsi256_ps(_mm256_and_si256(xv, high)), *acc);
        *acc = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(wv, 16)),
                               _mm256_castsi256_ps(_mm256_slli_epi32(xv, 16)), *acc);
    }
}

/* w · x of k bf16 by float FMAs, under DAZ and FTZ as vdpbf16ps computes them; the sum after MXCSR is restored. */
static float dot_bf16_fma(const uint8_t *w, const uint8_t *x, int k) {
    __m256 lo[FM_CHAINS], hi[FM_CHAINS];
    for (int j = 0; j < FM_CHAINS; j++) lo[j] = hi[j] = _mm256_setzero_ps();
    unsigned saved = _mm_getcsr(), flushing = saved | MXCSR_FTZ_DAZ;
    SET_MXCSR(flushing, lo, hi);
    int chunks = k / FM_BF16_CHUNK, c = 0;
    for (; c + FM_CHAINS <= chunks; c += FM_CHAINS) {
        _mm_prefetch((const char *)w + 2 * c * FM_BF16_CHUNK + PREFETCH_AHEAD, _MM_HINT_T0);
        _mm_prefetch((const char *)w + 2 * c * FM_BF16_CHUNK + PREFETCH_AHEAD + 64, _MM_HINT_T0);
#pragma GCC unroll 4
        for (int j = 0; j < FM_CHAINS; j++) {
            bf16_chunk_fma(&lo[j], &hi[j], w + 2 * (c + j) * FM_BF16_CHUNK, x + 2 * (c + j) * FM_BF16_CHUNK);
        }
    }
    for (; c < chunks; c++) {
        bf16_chunk_fma(&lo[c % FM_CHAINS], &hi[c % FM_CHAINS], w + 2 * c * FM_BF16_CHUNK, x + 2 * c * FM_BF16_CHUNK);
    }
    int rest = k - chunks * FM_BF16_CHUNK;
    if (rest > 0) {
        uint8_t wp[2 * FM_BF16_CHUNK] = {0}, xp[2 * FM_BF16_CHUNK] = {0};
        memcpy(wp, w + 2 * c * FM_BF16_CHUNK, 2 * rest);
        memcpy(xp, x + 2 * c * FM_BF16_CHUNK, 2 * rest);
        bf16_chunk_fma(&lo[c % FM_CHAINS], &hi[c % FM_CHAINS], wp, xp);
    }
    SET_MXCSR(saved, lo, hi);
    return sum_chains_256(lo, hi);
}

/* One chunk of 16 f16 (F16C: exact) into lanes 0..7 (lo) and 8..15 (hi). */
static inline void f16_chunk(__m256 *lo, __m256 *hi, const uint8_t *w, const uint8_t *x) {
    *lo = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)w)),
                          _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)x)), *lo);
    *hi = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(w + 16))),
                          _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + 16))), *hi);
}

/* One chunk of 16 floats into lanes 0..7 (lo) and 8..15 (hi). */
static inline void f32_chunk(__m256 *lo, __m256 *hi, const uint8_t *w, const uint8_t *x) {
    *lo = _mm256_fmadd_ps(_mm256_loadu_ps((const float *)w), _mm256_loadu_ps((const float *)x), *lo);
    *hi = _mm256_fmadd_ps(_mm256_loadu_ps((const float *)(w + 32)), _mm256_loadu_ps((const float *)(x + 32)), *hi);
}

/* w · x of k F16 or F32 values (size bytes each) in chunks of 16, the last one padded with zeros. */
#define DOT_16(NAME, CHUNK, SIZE)                                                                                    \
    static float NAME(const uint8_t *w, const uint8_t *x, int k) {                                                   \
        __m256 lo[FM_CHAINS], hi[FM_CHAINS];                                                                         \
        for (int j = 0; j < FM_CHAINS; j++) lo[j] = hi[j] = _mm256_setzero_ps();                                    \
        const int step = FM_HALF_CHUNK * (SIZE);                                                                     \
        int chunks = k / FM_HALF_CHUNK, c = 0;                                                                       \
        for (; c + FM_CHAINS <= chunks; c += FM_CHAINS) {                                                            \
            for (int p = 0; p < FM_CHAINS * step; p += 64) {                                                         \
                _mm_prefetch((const char *)w + c * step + PREFETCH_AHEAD + p, _MM_HINT_T0);                          \
            }                                                                                                        \
            _Pragma("GCC unroll 4") for (int j = 0; j < FM_CHAINS; j++) {                                             \
                CHUNK(&lo[j], &hi[j], w + (c + j) * step, x + (c + j) * step);                                       \
            }                                                                                                        \
        }                                                                                                            \
        for (; c < chunks; c++) CHUNK(&lo[c % FM_CHAINS], &hi[c % FM_CHAINS], w + c * step, x + c * step);           \
        int rest = k - chunks * FM_HALF_CHUNK;                                                                       \
        if (rest > 0) {                                                                                              \
            uint8_t wp[FM_HALF_CHUNK * (SIZE)] = {0}, xp[FM_HALF_CHUNK * (SIZE)] = {0};                              \
            memcpy(wp, w + c * step, (size_t)rest * (SIZE));                                                         \
            memcpy(xp, x + c * step, (size_t)rest * (SIZE));                                                         \
            CHUNK(&lo[c % FM_CHAINS], &hi[c % FM_CHAINS], wp, xp);                                                   \
        }                                                                                                            \
        return sum_chains_256(lo, hi);                                                                               \
    }

DOT_16(dot_f16, f16_chunk, 2)
DOT_16(dot_f32, f32_chunk, 4)

#if defined(__AVX512F__)
#define BF16_TARGET __attribute__((target("avx512bf16")))

/* Four chains of 16 lanes summed as fm_sum_chains does. */
static inline float sum_chains_512(__m512 c0, __m512 c1, __m512 c2, __m512 c3) {
    __m512 v = _mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3));
    return sum_lanes_256(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/*
 * Weight row w against R activation rows (x_stride bytes apart) by vdpbf16ps: each chunk of the weights loaded once
 * for the R rows, each row with its own four chains; out[r * out_stride] for row r. R is a constant where inlined.
 */
static inline __attribute__((always_inline)) BF16_TARGET void dot_bf16_rows(const uint8_t *w, const uint8_t *x,
                                                                           int64_t x_stride, int k, int R, float *out,
                                                                           int64_t out_stride) {
    __m512 acc[4][FM_CHAINS];
    for (int r = 0; r < R; r++) {
        for (int j = 0; j < FM_CHAINS; j++) acc[r][j] = _mm512_setzero_ps();
    }
    const int chunk_bytes = 2 * FM_BF16_CHUNK;
    int chunks = k / FM_BF16_CHUNK, c = 0;
    for (; c + FM_CHAINS <= chunks; c += FM_CHAINS) {
        if (R == 1) {
            for (int p = 0; p < FM_CHAINS * chunk_bytes; p += 64) {
                _mm_prefetch((const char *)w + c * chunk_bytes + PREFETCH_AHEAD + p, _MM_HINT_T0);
            }
        }
#pragma GCC unroll 4
        for (int j = 0; j < FM_CHAINS; j++) {
            __m512bh wv = (__m512bh)_mm512_loadu_si512(w + (c + j) * chunk_bytes);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                __m512bh xv = (__m512bh)_mm512_loadu_si512(x + r * x_stride + (c + j) * chunk_bytes);
                acc[r][j] = _mm512_dpbf16_ps(acc[r][j], wv, xv);
            }
        }
    }
    for (; c < chunks; c++) {
        __m512bh wv = (__m512bh)_mm512_loadu_si512(w + c * chunk_bytes);
        for (int r = 0; r < R; r++) {
            __m512bh xv = (__m512bh)_mm512_loadu_si512(x + r * x_stride + c * chunk_bytes);
            acc[r][c % FM_CHAINS] = _mm512_dpbf16_ps(acc[r][c % FM_CHAINS], wv, xv);
        }
    }
    int rest = k - chunks * FM_BF16_CHUNK;
    if (rest > 0) { /* the padded chunk: zeros past k */
        __mmask32 m = (__mmask32)((1u << rest) - 1);
        __m512bh wv = (__m512bh)_mm512_maskz_loadu_epi16(m, w + c * chunk_bytes);
        for (int r = 0; r < R; r++) {
            __m512bh xv = (__m512bh)_mm512_maskz_loadu_epi16(m, x + r * x_stride + c * chunk_bytes);
            acc[r][c % FM_CHAINS] = _mm512_dpbf16_ps(acc[r][c % FM_CHAINS], wv, xv);
        }
    }
    for (int r = 0; r < R; r++) out[r * out_stride] = sum_chains_512(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
}

/* The bf16 matmul by vdpbf16ps: per weight row, the activation rows four at a time, then the last one to three. */
static BF16_TARGET void matmul_bf16_dpbf16(const uint8_t *w, int64_t row_bytes, int row_from, int row_to,
                                           const uint8_t *act, int act_rows, int k, float *out, int64_t out_stride) {
    int64_t x_stride = 2 * (int64_t)k;
    for (int i = row_from; i < row_to; i++) {
        const uint8_t *row = w + i * row_bytes;
        int r = 0;
        for (; r + 4 <= act_rows; r += 4) {
            dot_bf16_rows(row, act + r * x_stride, x_stride, k, 4, out + r * out_stride + i, out_stride);
        }
        const uint8_t *x = act + r * x_stride;
        float *o = out + r * out_stride + i;
        switch (act_rows - r) {
        case 3: dot_bf16_rows(row, x, x_stride, k, 3, o, out_stride); break;
        case 2: dot_bf16_rows(row, x, x_stride, k, 2, o, out_stride); break;
        case 1: dot_bf16_rows(row, x, x_stride, k, 1, o, out_stride); break;
        default: break;
        }
    }
}
#endif

FS_API void FS_EXPORT(fs_convert_bf16)(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    const __m256i round = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1);
    const __m256i magnitude = _mm256_set1_epi32(0x7FFFFFFF), infinity = _mm256_set1_epi32(0x7F800000);
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256i u = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i rounded = _mm256_srli_epi32(
                _mm256_add_epi32(u, _mm256_add_epi32(round, _mm256_and_si256(_mm256_srli_epi32(u, 16), one))), 16);
        __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, magnitude), infinity);
        __m256i h = _mm256_blendv_epi8(rounded, quiet, nan);
        h = _mm256_permute4x64_epi64(_mm256_packus_epi32(h, h), 0x08); /* the 8 halves into the low 128 bits */
        _mm_storeu_si128((__m128i *)(out + 2 * i), _mm256_castsi256_si128(h));
    }
    for (; i < count; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        uint16_t h = fm_float_to_bf16(u);
        memcpy(out + 2 * i, &h, sizeof h);
    }
}

FS_API void FS_EXPORT(fs_convert_f16)(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(out + 2 * i), h);
    }
    for (; i < count; i++) {
        uint16_t h = float_to_half(x[i]);
        memcpy(out + 2 * i, &h, sizeof h);
    }
}

FS_API void FS_EXPORT(fs_convert_f32)(const float *x, void *y, int64_t count) {
    memcpy(y, x, (size_t)count * sizeof(float));
}

FS_API void FS_EXPORT(fs_matmul_bf16)(const void *w, int64_t row_bytes, int row_from, int row_to, const void *act,
                                      int act_rows, int k, float *out, int64_t out_stride) {
#if defined(__AVX512F__)
    if (__builtin_cpu_supports("avx512bf16")) {
        matmul_bf16_dpbf16(w, row_bytes, row_from, row_to, act, act_rows, k, out, out_stride);
        return;
    }
#endif
    for (int i = row_from; i < row_to; i++) {
        const uint8_t *row = (const uint8_t *)w + i * row_bytes;
        for (int r = 0; r < act_rows; r++) {
            out[r * out_stride + i] = dot_bf16_fma(row, (const uint8_t *)act + (int64_t)r * k * 2, k);
        }
    }
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

FLOAT_MATMUL(f16, 2)
FLOAT_MATMUL(f32, 4)
