/*
 * The float matmuls (BF16, F16, F32 weights) of the x86 variants, compiled once per variant as kernels_x86.c is
 * (CMakeLists.txt). They compute the order of float_matmul.h, as float_matmul_scalar.c does, bit for bit:
 *   BF16 on a CPU with AVX512-BF16 (the avx512 variant, checked at run time: Ice Lake has AVX-512 VNNI without it):
 *        vdpbf16ps, 32 products per instruction, on register tiles of 4 weight rows × 4 activation rows (16 chains);
 *   BF16 elsewhere: the same products as two float FMAs per pair (exact products, one rounding each) with MXCSR's
 *        DAZ and FTZ set around the loop, which is what vdpbf16ps does with its own rounding mode, 4 weight rows at
 *        a time;
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

/*
 * Bytes ahead of vdpbf16ps's decode loads that it prefetches into L2: 32 KiB (16 rows of 1024 bf16), measured from
 * memory against 8 KiB, 16 KiB, 64 KiB and the next tile's rows (native/cpu/README.md, "Float matmuls").
 */
#define DECODE_PREFETCH 32768

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

/*
 * One chunk of 32 bf16 pairs of RW weight rows (row_bytes apart) with the activation chunk x into their chains (lo, hi
 * per row): lane l of lo (hi) takes pair l (8 + l), the odd value's product, then the even's; x split once for the
 * RW rows.
 */
static inline __attribute__((always_inline)) void bf16_fma_chunk(__m256 *lo, __m256 *hi, const uint8_t *w,
                                                                 int64_t row_bytes, const uint8_t *x, int RW) {
    const __m256i high = _mm256_set1_epi32((int)0xFFFF0000u);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m256i xv = load256(x + 32 * h);
        __m256 xo = _mm256_castsi256_ps(_mm256_and_si256(xv, high));
        __m256 xe = _mm256_castsi256_ps(_mm256_slli_epi32(xv, 16));
#pragma GCC unroll 4
        for (int i = 0; i < RW; i++) {
            __m256i wv = load256(w + i * row_bytes + 32 * h);
            __m256 *acc = h == 0 ? &lo[i] : &hi[i];
            *acc = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(wv, high)), xo, *acc);
            *acc = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(wv, 16)), xe, *acc);
        }
    }
}

/*
 * The dots of RW weight rows (row_bytes apart) with activation row x, k bf16 each, by float FMAs under DAZ and FTZ as
 * vdpbf16ps computes them, one chain per row; out[i] for row i, summed after MXCSR is restored. RW (1..4) is a
 * constant where inlined. Prefetches the next group's rows into L2 as bf16_tile does.
 */
static inline __attribute__((always_inline)) void bf16_fma_rows(const uint8_t *w, int64_t row_bytes, const uint8_t *x,
                                                                int k, int RW, float *out) {
    __m256 lo[4], hi[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) lo[i] = hi[i] = _mm256_setzero_ps();
    unsigned saved = _mm_getcsr(), flushing = saved | MXCSR_FTZ_DAZ;
    SET_MXCSR(flushing, lo, hi);
    const int chunk_bytes = 2 * FM_BF16_CHUNK;
    int chunks = k / FM_BF16_CHUNK, rest = k - chunks * FM_BF16_CHUNK;
    for (int c = 0; c < chunks; c++) {
#pragma GCC unroll 4
        for (int i = 0; i < RW; i++) {
            _mm_prefetch((const char *)w + RW * row_bytes + (c * RW + i) * chunk_bytes, _MM_HINT_T1);
        }
        bf16_fma_chunk(lo, hi, w + c * chunk_bytes, row_bytes, x + c * chunk_bytes, RW);
    }
    if (rest > 0) { /* the padded chunk: zeros past k */
        uint8_t wp[4 * 2 * FM_BF16_CHUNK] = {0}, xp[2 * FM_BF16_CHUNK] = {0};
        memcpy(xp, x + chunks * chunk_bytes, 2 * rest);
        for (int i = 0; i < RW; i++) memcpy(wp + i * chunk_bytes, w + i * row_bytes + chunks * chunk_bytes, 2 * rest);
        bf16_fma_chunk(lo, hi, wp, chunk_bytes, xp, RW);
    }
    SET_MXCSR(saved, lo, hi);
#pragma GCC unroll 4
    for (int i = 0; i < RW; i++) out[i] = sum_lanes_256(lo[i], hi[i]);
}

/* The bf16 matmul by FMAs: per group of 4 weight rows (then the last one to three), each activation row. */
static void matmul_bf16_fma(const uint8_t *w, int64_t row_bytes, int row_from, int row_to, const uint8_t *act,
                            int act_rows, int k, float *out, int64_t out_stride) {
    int64_t x_stride = 2 * (int64_t)k;
    int i = row_from;
    for (; i + 4 <= row_to; i += 4) {
        for (int r = 0; r < act_rows; r++) {
            bf16_fma_rows(w + i * row_bytes, row_bytes, act + r * x_stride, k, 4, out + r * out_stride + i);
        }
    }
    for (; i < row_to; i++) {
        for (int r = 0; r < act_rows; r++) {
            bf16_fma_rows(w + i * row_bytes, row_bytes, act + r * x_stride, k, 1, out + r * out_stride + i);
        }
    }
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

/* The 16 lanes of v summed as fm_sum_lanes does. */
static inline float sum_lanes_512(__m512 v) {
    return sum_lanes_256(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/*
 * The 16 lanes of a, b, c and d each summed as fm_sum_lanes does, into out[0..3], four sums in each instruction:
 * halves added ([a0..7 b0..7] + [a8..15 b8..15]), then quarters ([a0..3 b0..3 c0..3 d0..3] + [a4..7 ...]: w0..w3 of
 * each), then w0 + w2 and w1 + w3 in each quarter, then those two.
 */
static inline void sum_lanes_512x4(__m512 a, __m512 b, __m512 c, __m512 d, float *out) {
    __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                              _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(1, 0, 1, 0)),
                              _mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(3, 2, 3, 2)));
    __m512 w = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));
    __m512 pairs = _mm512_add_ps(w, _mm512_permute_ps(w, _MM_SHUFFLE(1, 0, 3, 2)));
    __m512 sums = _mm512_add_ps(pairs, _mm512_permute_ps(pairs, _MM_SHUFFLE(2, 3, 0, 1)));
    _mm_storeu_ps(out, _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0,
                                                                                      0, 0, 0, 0, 0, 0), sums)));
}

/*
 * RW weight rows (row_bytes apart) against RC activation rows (x_stride bytes apart) by vdpbf16ps, one chain per
 * pair: each weight chunk loaded once for the RC activation rows, each activation chunk once for the RW weight rows;
 * out[r * out_stride + i] for weight row i and activation row r. RW and RC (1..4) are constants where inlined.
 * A decode's tile (RC = 1) prefetches the next tile's rows into L2, one line per line it reads: the rows lie back to
 * back, so that is one stream running a tile ahead (per-row prefetches a fixed distance ahead, or none, measured
 * slower than the one-row kernel this replaced, on the LM head from memory as on ffn_down from L3).
 */
static inline __attribute__((always_inline)) BF16_TARGET void bf16_tile(const uint8_t *w, int64_t row_bytes,
                                                                       const uint8_t *x, int64_t x_stride, int k,
                                                                       int RW, int RC, float *out, int64_t out_stride) {
    __m512 acc[4][4];
#pragma GCC unroll 4
    for (int i = 0; i < RW; i++) {
#pragma GCC unroll 4
        for (int r = 0; r < RC; r++) acc[i][r] = _mm512_setzero_ps();
    }
    const int chunk_bytes = 2 * FM_BF16_CHUNK;
    int chunks = k / FM_BF16_CHUNK, rest = k - chunks * FM_BF16_CHUNK;
    for (int c = 0; c < chunks; c++) {
        __m512bh wv[4];
#pragma GCC unroll 4
        for (int i = 0; i < RW; i++) {
            if (RC == 1) _mm_prefetch((const char *)w + RW * row_bytes + (c * RW + i) * chunk_bytes, _MM_HINT_T1);
            wv[i] = (__m512bh)_mm512_loadu_si512(w + i * row_bytes + c * chunk_bytes);
        }
#pragma GCC unroll 4
        for (int r = 0; r < RC; r++) {
            __m512bh xv = (__m512bh)_mm512_loadu_si512(x + r * x_stride + c * chunk_bytes);
#pragma GCC unroll 4
            for (int i = 0; i < RW; i++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wv[i], xv);
        }
    }
    if (rest > 0) { /* the padded chunk: zeros past k */
        __mmask32 m = (__mmask32)((1u << rest) - 1);
        __m512bh wv[4];
#pragma GCC unroll 4
        for (int i = 0; i < RW; i++) {
            wv[i] = (__m512bh)_mm512_maskz_loadu_epi16(m, w + i * row_bytes + chunks * chunk_bytes);
        }
#pragma GCC unroll 4
        for (int r = 0; r < RC; r++) {
            __m512bh xv = (__m512bh)_mm512_maskz_loadu_epi16(m, x + r * x_stride + chunks * chunk_bytes);
#pragma GCC unroll 4
            for (int i = 0; i < RW; i++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wv[i], xv);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < RC; r++) {
        if (RW == 4) {
            sum_lanes_512x4(acc[0][r], acc[1][r], acc[2][r], acc[3][r], out + r * out_stride);
        } else {
#pragma GCC unroll 4
            for (int i = 0; i < RW; i++) out[r * out_stride + i] = sum_lanes_512(acc[i][r]);
        }
    }
}

/* RW weight rows against every activation row: four at a time, then the last one to three. */
static inline __attribute__((always_inline)) BF16_TARGET void bf16_rows(const uint8_t *w, int64_t row_bytes,
                                                                       const uint8_t *act, int act_rows, int k, int RW,
                                                                       float *out, int64_t out_stride) {
    int64_t x_stride = 2 * (int64_t)k;
    int r = 0;
    for (; r + 4 <= act_rows; r += 4) {
        bf16_tile(w, row_bytes, act + r * x_stride, x_stride, k, RW, 4, out + r * out_stride, out_stride);
    }
    const uint8_t *x = act + r * x_stride;
    float *o = out + r * out_stride;
    switch (act_rows - r) {
    case 3: bf16_tile(w, row_bytes, x, x_stride, k, RW, 3, o, out_stride); break;
    case 2: bf16_tile(w, row_bytes, x, x_stride, k, RW, 2, o, out_stride); break;
    case 1: bf16_tile(w, row_bytes, x, x_stride, k, RW, 1, o, out_stride); break;
    default: break;
    }
}

/*
 * A decode's tile: RW weight rows (row_bytes apart, RW = 8, 4 or 1, a constant where inlined) against the one
 * activation row x, one chain per row as bf16_tile's (the same floats), each activation chunk loaded once for the RW
 * rows. Eight rows, so that eight independent vdpbf16ps and their loads are in flight; the weights stream ahead into
 * L2, one line prefetched DECODE_PREFETCH bytes ahead per line read (the rows lie back to back, and the stream runs
 * on into the next tiles' rows whatever k is).
 */
static inline __attribute__((always_inline)) BF16_TARGET void bf16_decode_tile(const uint8_t *w, int64_t row_bytes,
                                                                              const uint8_t *x, int k, int RW,
                                                                              float *out) {
    __m512 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < RW; i++) acc[i] = _mm512_setzero_ps();
    const int chunk_bytes = 2 * FM_BF16_CHUNK;
    int chunks = k / FM_BF16_CHUNK, rest = k - chunks * FM_BF16_CHUNK;
    for (int c = 0; c < chunks; c++) {
        __m512bh xv = (__m512bh)_mm512_loadu_si512(x + c * chunk_bytes);
#pragma GCC unroll 8
        for (int i = 0; i < RW; i++) {
            _mm_prefetch((const char *)w + DECODE_PREFETCH + (c * RW + i) * chunk_bytes, _MM_HINT_T1);
            acc[i] = _mm512_dpbf16_ps(acc[i], (__m512bh)_mm512_loadu_si512(w + i * row_bytes + c * chunk_bytes), xv);
        }
    }
    if (rest > 0) { /* the padded chunk: zeros past k */
        __mmask32 m = (__mmask32)((1u << rest) - 1);
        __m512bh xv = (__m512bh)_mm512_maskz_loadu_epi16(m, x + chunks * chunk_bytes);
#pragma GCC unroll 8
        for (int i = 0; i < RW; i++) {
            __m512bh wv = (__m512bh)_mm512_maskz_loadu_epi16(m, w + i * row_bytes + chunks * chunk_bytes);
            acc[i] = _mm512_dpbf16_ps(acc[i], wv, xv);
        }
    }
    if (RW == 1) {
        out[0] = sum_lanes_512(acc[0]);
    } else {
#pragma GCC unroll 2
        for (int i = 0; i < RW; i += 4) sum_lanes_512x4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3], out + i);
    }
}

/*
 * The bf16 matmul by vdpbf16ps: one activation row by bf16_decode_tile; several by weight rows four at a time (then
 * one at a time), each group against every row.
 */
static BF16_TARGET void matmul_bf16_dpbf16(const uint8_t *w, int64_t row_bytes, int row_from, int row_to,
                                           const uint8_t *act, int act_rows, int k, float *out, int64_t out_stride) {
    int i = row_from;
    if (act_rows == 1) { /* decode: weight rows eight at a time, then four, then one */
        for (; i + 8 <= row_to; i += 8) bf16_decode_tile(w + i * row_bytes, row_bytes, act, k, 8, out + i);
        for (; i + 4 <= row_to; i += 4) bf16_decode_tile(w + i * row_bytes, row_bytes, act, k, 4, out + i);
        for (; i < row_to; i++) bf16_decode_tile(w + i * row_bytes, row_bytes, act, k, 1, out + i);
        return;
    }
    for (; i + 4 <= row_to; i += 4) bf16_rows(w + i * row_bytes, row_bytes, act, act_rows, k, 4, out + i, out_stride);
    for (; i < row_to; i++) bf16_rows(w + i * row_bytes, row_bytes, act, act_rows, k, 1, out + i, out_stride);
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
    matmul_bf16_fma(w, row_bytes, row_from, row_to, act, act_rows, k, out, out_stride);
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
