/*
 * The forward pass's float operations besides the matmuls (rmsnorm, rope, silu·mul, residual add), so that nothing
 * on a token's path waits for the JIT: in Java they run interpreted, hundreds of times slower, until C2 has compiled
 * them, which on a small model or a first token is most of the time spent.
 *
 * One source, compiled once per variant with its instruction set (CMakeLists.txt) and vectorized by the compiler.
 * Each output element is computed by the same operations in the same order in every variant, and as the Java kernels
 * of fs.backend.cpu.VectorBackend do with 16 lanes: the sums of squares run in 16 lanes summed as sumLanes does,
 * silu's exp is FastExp's (fmaf is exact, so a vector FMA and the scalar call agree), no a * b + c is contracted
 * (-ffp-contract=off). So every variant gives the same floats, bit for bit, as the Java path at 512 bits. The file
 * is compiled with -ffinite-math-only -fno-signed-zeros, without which GCC does not vectorize the clamp of exp's
 * argument on AVX2: nothing here depends on a NaN comparison or the sign of a zero.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__F16C__) || defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h> /* the chunk kernel of attention over typed cache rows: f16 by vcvtph2ps, vector dots */
#endif

#include "fscpu.h"

#if !defined(FS_VARIANT)
#error "build with -DFS_VARIANT=scalar, avx2, avx512 or neon"
#endif
#define FS_CAT(a, b) a##_##b
#define FS_NAME(f, v) FS_CAT(f, v)
#define FS_EXPORT(f) FS_NAME(f, FS_VARIANT)

#define LANES 16

/* sumLanes of 16 lanes: halves added, then (0+4, 1+5, 2+6, 3+7) paired as (w0 + w2) + (w1 + w3). */
static inline float sum_lanes(const float *a) {
    float h[8];
    for (int i = 0; i < 8; i++) h[i] = a[i] + a[i + 8];
    float w0 = h[0] + h[4], w1 = h[1] + h[5], w2 = h[2] + h[6], w3 = h[3] + h[7];
    return (w0 + w2) + (w1 + w3);
}

FS_API void FS_EXPORT(fs_rms_norm)(const float *x, const float *gamma, float *out, int rows, int width, float eps) {
    int full = width - width % LANES;
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (int64_t) r * width;
        float *outr = out + (int64_t) r * width;
        float acc[LANES] = {0};
        for (int i = 0; i < full; i += LANES) {
            for (int l = 0; l < LANES; l++) acc[l] = fmaf(xr[i + l], xr[i + l], acc[l]);
        }
        float sum_squares = sum_lanes(acc);
        for (int i = full; i < width; i++) sum_squares = fmaf(xr[i], xr[i], sum_squares);
        float scale = (float) (1.0 / sqrt((double) (sum_squares / width + eps)));
        for (int i = 0; i < width; i++) outr[i] = xr[i] * scale * gamma[i];
    }
}

/* Rotate-half RoPE of one row's heads at one position: cos and sin hold that position's head_dim / 2 angles. */
FS_API void FS_EXPORT(fs_rope)(float *x, int heads, int head_dim, const float *cos_, const float *sin_) {
    int half = head_dim / 2;
    for (int h = 0; h < heads; h++) {
        float *lo = x + (int64_t) h * head_dim, *hi = lo + half;
        for (int i = 0; i < half; i++) {
            float x1 = lo[i], x2 = hi[i], c = cos_[i], s = sin_[i];
            lo[i] = x1 * c - x2 * s;
            hi[i] = x2 * c + x1 * s;
        }
    }
}

/* FastExp.exp: clamped to [-87, 88], 2^n by the exponent bits, a degree-7 Taylor polynomial by FMAs. */
static inline float fast_exp(float x) {
    x = fminf(fmaxf(x, -87.0f), 88.0f); /* a NaN may clamp here (finite math): silu's g / (e + 1) stays NaN */
    float n = x * 1.44269504f + 12582912.0f - 12582912.0f;
    float r = fmaf(n, -0.693145752f, x);
    r = fmaf(n, -1.42860677e-6f, r);
    float p = fmaf(r, 1.98412698e-4f, 1.38888889e-3f);
    p = fmaf(p, r, 8.33333333e-3f);
    p = fmaf(p, r, 4.16666667e-2f);
    p = fmaf(p, r, 1.66666667e-1f);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    int32_t bits = ((int32_t) n + 127) * (1 << 23);
    float two_to_n;
    memcpy(&two_to_n, &bits, sizeof two_to_n);
    return p * two_to_n;
}

FS_API void FS_EXPORT(fs_silu_mul)(const float *gate, const float *up, float *out, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        float g = gate[i];
        out[i] = g / (fast_exp(-g) + 1.0f) * up[i];
    }
}

FS_API void FS_EXPORT(fs_add)(float *x, const float *y, int64_t count) {
    for (int64_t i = 0; i < count; i++) x[i] += y[i];
}

/*
 * Scores of one query against `blocks` key blocks of kb positions: s[b·kb + l] = Σ_d k[b][d][l] · q[d], each the
 * sequential FMA chain over the dimensions (keys laid out [block][dimension][position in block], as CpuKvCache).
 * kb is a constant at each call below, so the loop over a block's positions is one vector.
 */
static inline void key_scores(const float *restrict q, const float *restrict keys, int head_dim, int kb, int blocks,
                              float *restrict s) {
    for (int b = 0; b < blocks; b++) {
        const float *block = keys + (int64_t) b * head_dim * kb;
        float acc[LANES] = {0};
        for (int d = 0; d < head_dim; d++) {
            for (int l = 0; l < kb; l++) acc[l] = fmaf(block[d * kb + l], q[d], acc[l]);
        }
        for (int l = 0; l < kb; l++) s[b * kb + l] = acc[l];
    }
}

/* Lanes summed by halves (lane i += lane i + half, half = n/2 .. 1), as MatmulKernels.sumLanes. */
static inline float sum_by_halves(float *lanes, int n) {
    for (int half = n / 2; half >= 1; half /= 2) {
        for (int i = 0; i < half; i++) lanes[i] += lanes[i + half];
    }
    return lanes[0];
}

/*
 * One query's attention over positions 0..seen-1 of one kv head (AttentionKernels' arithmetic, lane for lane at
 * kb = the Java kernels' lanes): scores, softmax of scale · score (the sum of exponentials in kb lanes by position,
 * then the rest in order), and out[e] = Σ_p w[p] · value[p][e] in position order. s is scratch for seen rounded up
 * to whole blocks.
 */
FS_API void FS_EXPORT(fs_attention)(const float *restrict q, const float *restrict keys, const float *restrict values,
                                    int head_dim, int kb, int seen, float scale, float *restrict s,
                                    float *restrict out) {
    int blocks = (seen + kb - 1) / kb;
    switch (kb) {
    case 16: key_scores(q, keys, head_dim, 16, blocks, s); break;
    case 8: key_scores(q, keys, head_dim, 8, blocks, s); break;
    case 4: key_scores(q, keys, head_dim, 4, blocks, s); break;
    default: key_scores(q, keys, head_dim, kb, blocks, s); break;
    }
    int full = seen - seen % kb;
    float max = -INFINITY;
    for (int p = 0; p < seen; p++) {
        s[p] *= scale;
        max = fmaxf(max, s[p]); /* a maximum is exact in any order */
    }
    float lanes[LANES] = {0};
    for (int p = 0; p < full; p++) {
        s[p] = fast_exp(s[p] - max);
        lanes[p % kb] += s[p];
    }
    float sum = sum_by_halves(lanes, kb);
    for (int p = full; p < seen; p++) {
        s[p] = fast_exp(s[p] - max);
        sum += s[p];
    }
    float inverse_sum = 1.0f / sum;
    for (int p = 0; p < seen; p++) s[p] *= inverse_sum;
    for (int e = 0; e < head_dim; e++) out[e] = 0.0f;
    for (int p = 0; p < seen; p++) {
        const float *value = values + (int64_t) p * head_dim;
        float w = s[p];
        for (int e = 0; e < head_dim; e++) out[e] = fmaf(value[e], w, out[e]);
    }
}

/* A key row into its block: dimension d of the position goes kb floats after dimension d - 1 (CpuKvCache's layout). */
FS_API void FS_EXPORT(fs_store_key)(const float *restrict k, float *restrict dst, int head_dim, int kb) {
    for (int d = 0; d < head_dim; d++) dst[(int64_t) d * kb] = k[d];
}

/* An IEEE half as a float: the bits moved into place and the exponent rebiased by a multiply by 2^112, which also
 * makes a subnormal half normal, exactly; infinities and NaNs keep their top exponent. */
static inline float half_to_float(uint16_t h) {
    uint32_t bits = h & 0x7fffu, u = bits << 13;
    float f;
    memcpy(&f, &u, 4);
    f *= 0x1p112f;
    memcpy(&u, &f, 4);
    if (bits >= 0x7c00u) u = (bits << 13) | 0x7f800000u;
    u |= (uint32_t) (h & 0x8000u) << 16;
    memcpy(&f, &u, 4);
    return f;
}

/* Bytes of a head's row of head_dim elements stored as type (fs.backend.KvCacheType's order). */
static inline int64_t row_bytes(int type, int head_dim) {
    return type == 0 ? head_dim * 4 : type == 3 ? head_dim / 32 * 34 : head_dim * 2;
}

/* Row p of a kv head's rows stored as type (fs.backend.KvCacheType's order: 0 f32, 1 f16, 2 bf16, 3 q8_0), as
 * head_dim floats: in place for f32, else dequantized into out. */
static inline const float *load_row(int type, const uint8_t *restrict rows, int64_t p, int head_dim,
                                    float *restrict out) {
    switch (type) {
    case 0: return (const float *) (rows + p * head_dim * 4); /* read in place */
    case 1: {
        const uint8_t *h = rows + p * head_dim * 2;
        int i = 0;
#if defined(__AVX512F__)
        for (; i + 16 <= head_dim; i += 16) {
            _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (h + 2 * i))));
        }
#elif defined(__F16C__)
        for (; i + 8 <= head_dim; i += 8) {
            _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (h + 2 * i))));
        }
#endif
        for (; i < head_dim; i++) out[i] = half_to_float((uint16_t) (h[2 * i] | h[2 * i + 1] << 8));
        return out;
    }
    case 2: {
        const uint8_t *h = rows + p * head_dim * 2;
        for (int i = 0; i < head_dim; i++) {
            uint32_t u = (uint32_t) (h[2 * i] | h[2 * i + 1] << 8) << 16;
            memcpy(out + i, &u, 4);
        }
        return out;
    }
    default: {
        int blocks = head_dim / 32;
        const uint8_t *b = rows + p * blocks * 34;
        for (int k = 0; k < blocks; k++, b += 34) {
            float d = half_to_float((uint16_t) (b[0] | b[1] << 8));
            const int8_t *qs = (const int8_t *) (b + 2);
#if defined(__AVX512F__)
            __m512 scale = _mm512_set1_ps(d);
            __m128i lo = _mm_loadu_si128((const __m128i *) qs), hi = _mm_loadu_si128((const __m128i *) (qs + 16));
            _mm512_storeu_ps(out + k * 32, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(lo)), scale));
            _mm512_storeu_ps(out + k * 32 + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(hi)), scale));
#else
            for (int j = 0; j < 32; j++) out[k * 32 + j] = qs[j] * d;
#endif
        }
        return out;
    }
    }
}

/* o += w · v over n floats, for the chunk kernel below: explicit vectors where the variant has them (GCC leaves such
 * lane loops scalar inside the kernel's loops: measured 3× slower). */
#if defined(__AVX512F__)
static inline void weigh_row(float w, const float *restrict v, float *restrict o, int n) {
    __m512 weight = _mm512_set1_ps(w);
    int e = 0;
    for (; e + 16 <= n; e += 16) {
        _mm512_storeu_ps(o + e, _mm512_fmadd_ps(_mm512_loadu_ps(v + e), weight, _mm512_loadu_ps(o + e)));
    }
    for (; e < n; e++) o[e] = fmaf(v[e], w, o[e]);
}


/* o += Σ_j w[j] · rows[j] over n rows, each element's FMAs in row order: 64 elements at a time in registers. */
static inline void weigh_rows(const float *restrict w, const float *const *rows, int n, float *restrict o, int d) {
    int e = 0;
    for (; e + 64 <= d; e += 64) {
        __m512 a0 = _mm512_loadu_ps(o + e), a1 = _mm512_loadu_ps(o + e + 16);
        __m512 a2 = _mm512_loadu_ps(o + e + 32), a3 = _mm512_loadu_ps(o + e + 48);
        for (int j = 0; j < n; j++) {
            __m512 weight = _mm512_set1_ps(w[j]);
            const float *v = rows[j] + e;
            a0 = _mm512_fmadd_ps(_mm512_loadu_ps(v), weight, a0);
            a1 = _mm512_fmadd_ps(_mm512_loadu_ps(v + 16), weight, a1);
            a2 = _mm512_fmadd_ps(_mm512_loadu_ps(v + 32), weight, a2);
            a3 = _mm512_fmadd_ps(_mm512_loadu_ps(v + 48), weight, a3);
        }
        _mm512_storeu_ps(o + e, a0);
        _mm512_storeu_ps(o + e + 16, a1);
        _mm512_storeu_ps(o + e + 32, a2);
        _mm512_storeu_ps(o + e + 48, a3);
    }
    for (int j = 0; j < n; j++) weigh_row(w[j], rows[j] + e, o + e, d - e);
}
#elif defined(__AVX2__) && defined(__FMA__)
static inline void weigh_row(float w, const float *restrict v, float *restrict o, int n) {
    __m256 weight = _mm256_set1_ps(w);
    int e = 0;
    for (; e + 8 <= n; e += 8) {
        _mm256_storeu_ps(o + e, _mm256_fmadd_ps(_mm256_loadu_ps(v + e), weight, _mm256_loadu_ps(o + e)));
    }
    for (; e < n; e++) o[e] = fmaf(v[e], w, o[e]);
}


/* o += Σ_j w[j] · rows[j] over n rows, each element's FMAs in row order: 32 elements at a time in registers. */
static inline void weigh_rows(const float *restrict w, const float *const *rows, int n, float *restrict o, int d) {
    int e = 0;
    for (; e + 32 <= d; e += 32) {
        __m256 a0 = _mm256_loadu_ps(o + e), a1 = _mm256_loadu_ps(o + e + 8);
        __m256 a2 = _mm256_loadu_ps(o + e + 16), a3 = _mm256_loadu_ps(o + e + 24);
        for (int j = 0; j < n; j++) {
            __m256 weight = _mm256_set1_ps(w[j]);
            const float *v = rows[j] + e;
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(v), weight, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(v + 8), weight, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(v + 16), weight, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(v + 24), weight, a3);
        }
        _mm256_storeu_ps(o + e, a0);
        _mm256_storeu_ps(o + e + 8, a1);
        _mm256_storeu_ps(o + e + 16, a2);
        _mm256_storeu_ps(o + e + 24, a3);
    }
    for (int j = 0; j < n; j++) weigh_row(w[j], rows[j] + e, o + e, d - e);
}
#else
static inline void weigh_row(float w, const float *restrict v, float *restrict o, int n) {
    for (int e = 0; e < n; e++) o[e] = fmaf(v[e], w, o[e]);
}

static inline void weigh_rows(const float *restrict w, const float *const *rows, int n, float *restrict o, int d) {
    for (int j = 0; j < n; j++) weigh_row(w[j], rows[j], o, d);
}
#endif

/* Positions of values dequantized together for the chunk kernel's weighted sum: 32 rows of 128 floats are 16 KiB. */
#define VALUE_ROWS 32

/*
 * Keys are stored in blocks of KEY_POSITIONS positions, dimension-major (fs.backend.cpu.CpuKvCache): dimension d of
 * the block's 16 keys is 16 consecutive elements (f32, f16 or bf16); for q8_0, per block of 32 dimensions, the 16
 * keys' scales (f16) and then, per dimension, their 16 int8. So one vector holds a dimension of 16 keys, and the
 * scores of a query are 16 chains of FMAs over the dimensions, one per key, with no sum across lanes; every variant
 * computes each score by the same chain, so they agree bit for bit. Four queries go at once (their chains overlap).
 */
#define KEY_POSITIONS 16

/* key_block_scores: scale · q·k of four queries (q0..q3: head_dim floats each) and the block's 16 keys, query i's
 * into out[i·stride ..]. */
#if defined(__AVX512F__)
#define FS_Q8_0_KEYS(LOAD_SCALES, BODY)                                                                              \
    for (int db = 0; db < head_dim / 32; db++) {                                                                    \
        const uint8_t *part = block + db * (KEY_POSITIONS * 34);                                                    \
        LOAD_SCALES;                                                                                                 \
        for (int t = 0; t < 32; t++) {                                                                               \
            int d = db * 32 + t;                                                                                     \
            BODY;                                                                                                    \
        }                                                                                                            \
    }
static void key_block_scores(int type, const uint8_t *restrict block, const float *q0, const float *q1,
                             const float *q2, const float *q3, int head_dim, float scale, float *out, int stride) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
#define FS_FMA4(K)                                                                                                   \
    do {                                                                                                             \
        __m512 k_ = (K);                                                                                             \
        a0 = _mm512_fmadd_ps(_mm512_set1_ps(q0[d]), k_, a0);                                                         \
        a1 = _mm512_fmadd_ps(_mm512_set1_ps(q1[d]), k_, a1);                                                         \
        a2 = _mm512_fmadd_ps(_mm512_set1_ps(q2[d]), k_, a2);                                                         \
        a3 = _mm512_fmadd_ps(_mm512_set1_ps(q3[d]), k_, a3);                                                         \
    } while (0)
    switch (type) {
    case 0:
        for (int d = 0; d < head_dim; d++) FS_FMA4(_mm512_loadu_ps((const float *) block + d * 16));
        break;
    case 1:
        for (int d = 0; d < head_dim; d++) {
            FS_FMA4(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (block + d * 32))));
        }
        break;
    case 2:
        for (int d = 0; d < head_dim; d++) {
            __m512i bits = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *) (block + d * 32)));
            FS_FMA4(_mm512_castsi512_ps(_mm512_slli_epi32(bits, 16)));
        }
        break;
    default: {
        __m512 scales;
        FS_Q8_0_KEYS(scales = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) part)),
                     FS_FMA4(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                                               _mm_loadu_si128((const __m128i *) (part + 32 + t * 16)))),
                                           scales)))
    }
    }
#undef FS_FMA4
    __m512 sc = _mm512_set1_ps(scale);
    _mm512_storeu_ps(out, _mm512_mul_ps(a0, sc));
    _mm512_storeu_ps(out + stride, _mm512_mul_ps(a1, sc));
    _mm512_storeu_ps(out + 2 * stride, _mm512_mul_ps(a2, sc));
    _mm512_storeu_ps(out + 3 * stride, _mm512_mul_ps(a3, sc));
}
#elif defined(__AVX2__) && defined(__FMA__)
#define FS_Q8_0_KEYS(LOAD_SCALES, BODY)                                                                              \
    for (int db = 0; db < head_dim / 32; db++) {                                                                    \
        const uint8_t *part = block + db * (KEY_POSITIONS * 34);                                                    \
        LOAD_SCALES;                                                                                                 \
        for (int t = 0; t < 32; t++) {                                                                               \
            int d = db * 32 + t;                                                                                     \
            BODY;                                                                                                    \
        }                                                                                                            \
    }
static void key_block_scores(int type, const uint8_t *restrict block, const float *q0, const float *q1,
                             const float *q2, const float *q3, int head_dim, float scale, float *out, int stride) {
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
#define FS_FMA4(K, L)                                                                                                \
    do {                                                                                                             \
        __m256 k_ = (K), l_ = (L), x_ = _mm256_set1_ps(q0[d]);                                                       \
        a0 = _mm256_fmadd_ps(x_, k_, a0);                                                                            \
        b0 = _mm256_fmadd_ps(x_, l_, b0);                                                                            \
        x_ = _mm256_set1_ps(q1[d]);                                                                                  \
        a1 = _mm256_fmadd_ps(x_, k_, a1);                                                                            \
        b1 = _mm256_fmadd_ps(x_, l_, b1);                                                                            \
        x_ = _mm256_set1_ps(q2[d]);                                                                                  \
        a2 = _mm256_fmadd_ps(x_, k_, a2);                                                                            \
        b2 = _mm256_fmadd_ps(x_, l_, b2);                                                                            \
        x_ = _mm256_set1_ps(q3[d]);                                                                                  \
        a3 = _mm256_fmadd_ps(x_, k_, a3);                                                                            \
        b3 = _mm256_fmadd_ps(x_, l_, b3);                                                                            \
    } while (0)
    switch (type) {
    case 0:
        for (int d = 0; d < head_dim; d++) {
            const float *k = (const float *) block + d * 16;
            FS_FMA4(_mm256_loadu_ps(k), _mm256_loadu_ps(k + 8));
        }
        break;
    case 1:
        for (int d = 0; d < head_dim; d++) {
            const __m128i *k = (const __m128i *) (block + d * 32);
            FS_FMA4(_mm256_cvtph_ps(_mm_loadu_si128(k)), _mm256_cvtph_ps(_mm_loadu_si128(k + 1)));
        }
        break;
    case 2:
        for (int d = 0; d < head_dim; d++) {
            const __m128i *k = (const __m128i *) (block + d * 32);
            FS_FMA4(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(k)), 16)),
                    _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(k + 1)), 16)));
        }
        break;
    default: {
        __m256 lo, hi;
        FS_Q8_0_KEYS((lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) part)),
                      hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (part + 16)))),
                     FS_FMA4(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                               _mm_loadl_epi64((const __m128i *) (part + 32 + t * 16)))), lo),
                             _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                               _mm_loadl_epi64((const __m128i *) (part + 40 + t * 16)))), hi)))
    }
    }
#undef FS_FMA4
    __m256 sc = _mm256_set1_ps(scale);
    _mm256_storeu_ps(out, _mm256_mul_ps(a0, sc));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(b0, sc));
    _mm256_storeu_ps(out + stride, _mm256_mul_ps(a1, sc));
    _mm256_storeu_ps(out + stride + 8, _mm256_mul_ps(b1, sc));
    _mm256_storeu_ps(out + 2 * stride, _mm256_mul_ps(a2, sc));
    _mm256_storeu_ps(out + 2 * stride + 8, _mm256_mul_ps(b2, sc));
    _mm256_storeu_ps(out + 3 * stride, _mm256_mul_ps(a3, sc));
    _mm256_storeu_ps(out + 3 * stride + 8, _mm256_mul_ps(b3, sc));
}
#else
/* Element (d, j) of a key block. */
static inline float key_element(int type, const uint8_t *block, int d, int j) {
    switch (type) {
    case 0: return ((const float *) block)[d * 16 + j];
    case 1: {
        const uint8_t *h = block + (d * 16 + j) * 2;
        return half_to_float((uint16_t) (h[0] | h[1] << 8));
    }
    case 2: {
        const uint8_t *h = block + (d * 16 + j) * 2;
        uint32_t u = (uint32_t) (h[0] | h[1] << 8) << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    default: {
        const uint8_t *part = block + (d / 32) * (KEY_POSITIONS * 34);
        float scale = half_to_float((uint16_t) (part[2 * j] | part[2 * j + 1] << 8));
        return (float) (int8_t) part[32 + (d % 32) * 16 + j] * scale;
    }
    }
}

static void key_block_scores(int type, const uint8_t *restrict block, const float *q0, const float *q1,
                             const float *q2, const float *q3, int head_dim, float scale, float *out, int stride) {
    const float *qs[4] = {q0, q1, q2, q3};
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < KEY_POSITIONS; j++) {
            float acc = 0.0f;
            for (int d = 0; d < head_dim; d++) acc = fmaf(qs[i][d], key_element(type, block, d, j), acc);
            out[i * stride + j] = acc * scale;
        }
    }
}
#endif

/*
 * fs.backend.cpu.ChunkedAttention's chunk: nq queries (q, head_dim floats each) of one kv head, query i seeing
 * positions below seen[i], over positions from..to-1 of the kv head's rows of keys and values (stored as k_type and
 * v_type). Per query: m = the largest scale · q·k, l = Σ e^(score − m), o = Σ e^(score − m) · value, all in position
 * order; a query that sees none of the chunk gets m = -inf, l = 0, o = 0. s is scratch of nq · s_stride floats. Keys
 * come in blocks of KEY_POSITIONS (key_block_scores), values in rows; from is a multiple of KEY_POSITIONS.
 */
FS_API void FS_EXPORT(fs_attention_chunk)(const float *restrict q, int nq, const int *restrict seen,
                                          const uint8_t *restrict keys, const uint8_t *restrict values, int k_type,
                                          int v_type, int head_dim, int from, int to, float scale,
                                          float *restrict s, int s_stride, float *restrict m, float *restrict l,
                                          float *restrict o) {
    /* Scores a block of keys at a time, four queries at once (the last repeated to fill a four); a block's scores
     * past to, or past what a query sees, are computed and never read (s has a whole chunk per query). */
    int64_t key_block = (int64_t) KEY_POSITIONS * row_bytes(k_type, head_dim);
    for (int p0 = from; p0 < to; p0 += KEY_POSITIONS) {
        const uint8_t *block = keys + (int64_t) (p0 / KEY_POSITIONS) * key_block;
        for (int i = 0; i < nq; i += 4) {
            const float *qi[4];
            for (int t = 0; t < 4; t++) qi[t] = q + (int64_t) (i + t < nq ? i + t : nq - 1) * head_dim;
            float scores[4 * KEY_POSITIONS];
            key_block_scores(k_type, block, qi[0], qi[1], qi[2], qi[3], head_dim, scale, scores, KEY_POSITIONS);
            for (int t = 0; t < 4 && i + t < nq; t++) {
                memcpy(s + (int64_t) (i + t) * s_stride + p0 - from, scores + t * KEY_POSITIONS, sizeof scores / 4);
            }
        }
    }
    for (int i = 0; i < nq; i++) {
        int n = (to < seen[i] ? to : seen[i]) - from;
        float *si = s + (int64_t) i * s_stride, *oi = o + (int64_t) i * head_dim;
        for (int e = 0; e < head_dim; e++) oi[e] = 0.0f;
        if (n <= 0) {
            m[i] = -INFINITY;
            l[i] = 0.0f;
            continue;
        }
        float max = -INFINITY;
        for (int j = 0; j < n; j++) max = fmaxf(max, si[j]);
        for (int j = 0; j < n; j++) si[j] = fast_exp(si[j] - max); /* apart from the sum, so that it vectorizes */
        float lanes[LANES] = {0}, sum;
        int full = n - n % LANES;
        for (int j = 0; j < full; j += LANES) {
            for (int k = 0; k < LANES; k++) lanes[k] += si[j + k];
        }
        sum = sum_lanes(lanes);
        for (int j = full; j < n; j++) sum += si[j];
        m[i] = max;
        l[i] = sum;
    }
    /* The values in stretches of VALUE_ROWS positions, dequantized once into L1 (vrows), then each query's output
     * carried over the stretch in registers: per element the same FMAs in position order, without a store per
     * position. */
    float vrows[VALUE_ROWS * 512] __attribute__((aligned(64)));
    const float *stretch[VALUE_ROWS];
    for (int p0 = from; p0 < to; p0 += VALUE_ROWS) {
        int p1 = p0 + VALUE_ROWS < to ? p0 + VALUE_ROWS : to;
        for (int p = p0; p < p1; p++) {
            stretch[p - p0] = load_row(v_type, values, p, head_dim, vrows + (int64_t) (p - p0) * head_dim);
        }
        for (int i = 0; i < nq; i++) {
            int end = p1 < seen[i] ? p1 : seen[i];
            if (end > p0) {
                weigh_rows(s + (int64_t) i * s_stride + p0 - from, stretch, end - p0, o + (int64_t) i * head_dim,
                           head_dim);
            }
        }
    }
}

/* The index of the first largest of count floats (count ≥ 1): the maximum in one pass, its first place in another. */
FS_API int64_t FS_EXPORT(fs_argmax)(const float *x, int64_t count) {
    float max = x[0];
    for (int64_t i = 1; i < count; i++) max = fmaxf(max, x[i]);
    for (int64_t i = 0; i < count; i++) {
        if (x[i] == max) return i;
    }
    return 0;
}
