/*
 * The x86 variants, one source compiled once per instruction set with its own flags (CMakeLists.txt):
 *   avx2   -mavx2 -mfma -mf16c: int8 products by vpmaddubsw (u8 × s8 into int16 pairs), summed by vpmaddwd;
 *   avx512 adds -mavx512f -mavx512bw -mavx512vl -mavx512vnni: the same 256-bit kernels with VNNI's fused
 *          vpdpbusd (u8 × s8, four products into an int32 lane) and vpdpwssd (int16 pairs into an int32 lane);
 *   avxvnni adds -mavxvnni to avx2's flags: the same instructions in their VEX form (Alder Lake and later, Zen 5),
 *          for the CPUs that have VNNI without AVX-512.
 * All compute exactly the integers and float operations of kernels_scalar.c (the lane layout is that of a 256-bit
 * vector: lane l of a 32-byte chunk holds its bytes 4l..4l + 3, whichever instruction summed them), so they agree
 * with it bit for bit. vpmaddubsw saturates its int16 pairs; every use below stays inside int16 (noted there), so
 * the avx2 and VNNI paths give the same sums.
 */
#include <immintrin.h>
#include <math.h>

#include "repacked.h"

#if !defined(FS_VARIANT)
#error "build with -DFS_VARIANT=avx2, avx512 or avxvnni"
#endif
#define FS_CAT(a, b) a##_##b
#define FS_NAME(f, v) FS_CAT(f, v)
#define FS_EXPORT(f) FS_NAME(f, FS_VARIANT)

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define FS_VNNI 1
#define FS_DPBUSD _mm256_dpbusd_epi32
#define FS_DPWSSD _mm256_dpwssd_epi32
#elif defined(__AVXVNNI__)
#define FS_VNNI 1
#define FS_DPBUSD _mm256_dpbusd_avx_epi32
#define FS_DPWSSD _mm256_dpwssd_avx_epi32
#endif

/* acc + per int32 lane the four products of unsigned bytes u and signed bytes s. */
static inline __m256i dot_u8_s8(__m256i acc, __m256i u, __m256i s) {
#ifdef FS_VNNI
    return FS_DPBUSD(acc, u, s);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

/* acc + per int32 lane the two products of int16 lanes a and b. */
static inline __m256i dot_i16(__m256i acc, __m256i a, __m256i b) {
#ifdef FS_VNNI
    return FS_DPWSSD(acc, a, b);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

/* The lane sums of w·a for signed bytes, by the sign trick: |w| (unsigned, 128 for −128) times a with w's sign. */
static inline __m256i dot_i8(__m256i acc, __m256i w, __m256i a) {
    return dot_u8_s8(acc, _mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w)); /* pairs ≤ 2·128·127 < 2^15 */
}

static inline __m256i load256(const uint8_t *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

/*
 * Asks for the cache lines of a block or two ahead of the one being read (bytes from p, rounded up to whole lines):
 * the hardware prefetcher alone keeps fewer lines in flight than one core can take from memory (a few percent on a
 * 151936-row Q6_K matmul). bytes is a constant at every call, so the loop is unrolled. Always inlined: gcc 12 takes
 * a function whose only effect is __builtin_prefetch for one without effects, and where it does not inline it early
 * it deletes the call as dead code. So it had done in every repacked (x16) kernel, which therefore never prefetched;
 * made to, they read memory slower (fscpu_bench from memory, native/cpu/README.md), and they no longer ask.
 */
static inline __attribute__((always_inline)) void prefetch_block(const uint8_t *p, int bytes) {
    for (int offset = 0; offset < bytes; offset += 64) _mm_prefetch((const char *)p + offset, _MM_HINT_T0);
}

static inline float half(const uint8_t *p) {
    return _cvtsh_ss(load_u16(p));
}

static inline float sum_vector(__m256 v) {
    float lanes[8];
    _mm256_storeu_ps(lanes, v);
    return sum_lanes(lanes);
}

/* acc + d · (float) lanes, per lane: the fmaf of kernels_scalar.c's add_lanes. */
static inline __m256 add_lanes(__m256 acc, float d, __m256i lanes) {
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes), acc);
}

/* The sum of four int32 lanes. */
static inline int32_t sum_i32x4(__m128i s) {
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
}

/* The sum of eight int32 lanes: a Q4_0 or Q4_K block's one integer (exact in any order). */
static inline int32_t sum_i32x8(__m256i v) {
    return sum_i32x4(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

/* The sums of the eight int32 lanes of v0..v3, as lanes 0..3: four rows' block integers at once. */
static inline __m128i sums_i32x8(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

/* 32 floats, x[8v..8v + 7] times id[v], rounded to the nearest integer (ties to even), to 32 int8 at q in order. */
static inline void quantize32(const float *x, const __m256 id[4], uint8_t *q) {
    __m256i i[4];
    for (int v = 0; v < 4; v++) {
        __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(x + 8 * v), id[v]);
        i[v] = _mm256_cvtps_epi32(_mm256_round_ps(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    /* The packs work within 128-bit halves: bytes come out as dwords 0, 2, 4, 6, 1, 3, 5, 7 of the result. */
    __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(i[0], i[1]), _mm256_packs_epi32(i[2], i[3]));
    bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)q, bytes);
}

static inline __m256 abs_max(__m256 m, const float *x) {
    return _mm256_max_ps(m, _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_loadu_ps(x)));
}

static inline float max_lane(__m256 m) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

/*
 * q8_0_steps (blocks.h) in vectors, to the same bytes: the scalar loop's fmaxf is a libm call per value, and it was
 * a quarter of the small model's prompt time (perf, ../shared/trained Q8_0 pp64). Each 128-bit half of the vector v
 * is one group of 4 (groups 2v and 2v + 1); id[v] comes back with each group's scaling in its half, quantize32's
 * layout. Every step is the scalar's operation on the same floats (a maximum, x·16 / amax, its ceiling,
 * 2032 / (amax·m)), so the bytes match; max(|x|, 0) returns its second operand for a NaN, as fmaxf(0, NaN) gives 0.
 */
static inline void q8_0_steps_x86(const float *x, uint8_t *block, __m256 id[4]) {
    const __m256 zero = _mm256_setzero_ps();
    __m256 group[4], amax8 = zero;
    for (int v = 0; v < 4; v++) {
        __m256 a = _mm256_max_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_loadu_ps(x + 8 * v)), zero);
        a = _mm256_max_ps(a, _mm256_permute_ps(a, 0xB1)); /* lanes 0↔1, 2↔3 */
        group[v] = _mm256_max_ps(a, _mm256_permute_ps(a, 0x4E)); /* pairs swapped: the group's max in all 4 */
        amax8 = _mm256_max_ps(amax8, group[v]);
    }
    float amax = max_lane(amax8);
    float d = amax / 2032.0f;
    memcpy(block, &d, sizeof d);
    if (amax == 0.0f) {
        for (int g = 0; g < 8; g++) q8_0_group_scaling(block, g, 0.0f, 0.0f); /* multiple 1, scaling 0 */
        for (int v = 0; v < 4; v++) id[v] = zero;
        return;
    }
    const __m256 amaxv = _mm256_set1_ps(amax);
    for (int v = 0; v < 4; v++) {
        __m256 ratio = _mm256_div_ps(_mm256_mul_ps(group[v], _mm256_set1_ps(16.0f)), amaxv);
        __m256i m = _mm256_cvttps_epi32(_mm256_round_ps(ratio, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC));
        m = _mm256_max_epi32(m, _mm256_set1_epi32(1));
        id[v] = _mm256_div_ps(_mm256_set1_ps(2032.0f), _mm256_mul_ps(amaxv, _mm256_cvtepi32_ps(m)));
        int16_t low = (int16_t)_mm256_extract_epi32(m, 0), high = (int16_t)_mm256_extract_epi32(m, 4);
        int16_t multiples[4] = {low, low, high, high};
        memcpy(block + Q8_0_MULTIPLES + 8 * v, multiples, sizeof multiples);
    }
}

FS_API void FS_EXPORT(fs_quantize_q8_0)(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t b = 0; b < count / 32; b++, x += 32, out += Q8_0_BYTES) {
        __m256 id[4];
        q8_0_steps_x86(x, out, id);
        quantize32(x, id, out + Q8_0_QS);
    }
}

FS_API void FS_EXPORT(fs_quantize_q8_k)(const float *x, void *y, int64_t count) {
    uint8_t *out = y;
    for (int64_t b = 0; b < count / 256; b++, x += 256, out += Q8_K_BYTES) {
        float chunk_max[8], amax = 0.0f;
        for (int c = 0; c < 8; c++) {
            __m256 m = _mm256_setzero_ps();
            for (int v = 0; v < 4; v++) m = abs_max(m, x + 32 * c + 8 * v);
            chunk_max[c] = max_lane(m);
            amax = fmaxf(amax, chunk_max[c]);
        }
        float d = amax / 2032.0f;
        memcpy(out, &d, sizeof d);
        for (int c = 0; c < 8; c++) {
            int m = chunk_multiple(chunk_max[c], amax);
            __m256 id = _mm256_set1_ps(amax != 0.0f ? 2032.0f / (amax * (float)m) : 0.0f);
            quantize32(x + 32 * c, (const __m256[4]){id, id, id, id}, out + Q8_K_QS + 32 * c);
            store_multiple(out, c, m);
        }
        const int8_t *q = (const int8_t *)(out + Q8_K_QS);
        for (int g = 0; g < 16; g++) {
            int16_t sum = 0;
            for (int j = 16 * g; j < 16 * g + 16; j++) sum = (int16_t)(sum + q[j]);
            memcpy(out + Q8_K_SUMS + 2 * g, &sum, sizeof sum);
        }
    }
}

/* The 8 chunk multiples of the Q8_K activation block a as int16, in both 128-bit halves. */
static inline __m256i chunk_multiples(const uint8_t *a) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(a + Q8_K_CHUNK_MULTIPLES)));
}

/* The multiple of each of the 16 groups of 16 of the Q8_K activation block a (chunk c's for 2c and 2c + 1). */
static inline __m256i group_multiples(const uint8_t *a) {
    return load256(a + Q8_K_GROUP_MULTIPLES);
}

/* The 16 int16 multiples of the Q8_0 activation block a (group g's at 2g, 2g + 1): vpmaddwd's second operand. */
static inline __m256i q8_0_multiples(const uint8_t *a) {
    return load256(a + Q8_0_MULTIPLES);
}

/*
 * Σ_g m_g·Σ_{j in g} a_j of a Q8_0 activation block, exactly: the pair sums of its quants (vpmaddubsw by ones, 16
 * int16) times the multiples, which the block stores once per pair (vpmaddwd), then the eight int32 lanes summed.
 * The x16 kernels tabulate it per block and activation row at every call: a scalar loop here cost as much as the
 * products of a 64-row slice.
 */
static inline int32_t q8_0_weighted_sum(const uint8_t *a) {
    __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), load256(a + Q8_0_QS));
    __m256i lanes = _mm256_madd_epi16(pairs, q8_0_multiples(a));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
    return sum_i32x4(s);
}

/*
 * Lane l: m_l times the four products of unsigned bytes u and signed bytes s, as int16 pairs (whose bounds the
 * callers give) times the multiples by vpmaddwd. No vpdpbusd: the multiples need the pairs (VNNI would take
 * vpdpbusd and vpmulld, one instruction no fewer).
 */
static inline __m256i q8_0_lanes(__m256i u, __m256i s, __m256i multiples) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), multiples);
}

/* The lanes of one Q8_0 block against the activation block a, by the sign trick (pairs ≤ 2·128·127 < 2^15). */
static inline __m256i q8_0_block_lanes(const uint8_t *w, const uint8_t *a) {
    __m256i q = load256(w + 2);
    return q8_0_lanes(_mm256_sign_epi8(q, q), _mm256_sign_epi8(load256(a + Q8_0_QS), q), q8_0_multiples(a));
}

static float dot_q8_0(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q8_0_BLOCK, a += Q8_0_BYTES)
        acc = fmaf(half(w) * load_f32(a), (float)sum_i32x8(q8_0_block_lanes(w, a)), acc);
    return acc;
}

/* dot_q8_0 for four weight rows against one activation row, as dot4_q4_0 (below). */
static void dot4_q8_0(const uint8_t *w, int64_t stride, const uint8_t *a, int blocks, float *out, int64_t out_step) {
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += Q8_0_BLOCK, a += Q8_0_BYTES) {
        __m128i t = sums_i32x8(q8_0_block_lanes(w, a), q8_0_block_lanes(w + stride, a),
                               q8_0_block_lanes(w + 2 * stride, a), q8_0_block_lanes(w + 3 * stride, a));
        __m128 d = _mm_mul_ps(_mm_setr_ps(half(w), half(w + stride), half(w + 2 * stride), half(w + 3 * stride)),
                              _mm_set1_ps(load_f32(a)));
        acc = _mm_fmadd_ps(d, _mm_cvtepi32_ps(t), acc);
    }
    float sums[4];
    _mm_storeu_ps(sums, acc);
    for (int q = 0; q < 4; q++) out[q * out_step] = sums[q];
}

/*
 * The lanes of one Q4_0 block against its activation quants x, given x8 = 8·x in int16 pairs (the activations' part
 * of the offset) and their multiples: (q − 8)·x as q·x − 8·x, q unsigned, so no sign trick. Pairs ≤ 2·15·127, and
 * their difference too: inside int16.
 */
static inline __m256i q4_0_unpacked_lanes(__m256i q, __m256i x, __m256i x8, __m256i multiples) {
    return _mm256_madd_epi16(_mm256_sub_epi16(_mm256_maddubs_epi16(q, x), x8), multiples);
}

/* The 32 unsigned weights of a Q4_0 block, in order. */
static inline __m256i q4_0_unpack(const uint8_t *w) {
    /* Low nibbles are weights 0..15, high nibbles 16..31: the 16 bytes in both halves, the high half shifted. */
    __m256i packed = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(w + 2)));
    return _mm256_and_si256(_mm256_srlv_epi64(packed, _mm256_setr_epi64x(0, 0, 4, 4)), _mm256_set1_epi8(0xF));
}

static inline __m256i q4_0_lanes(const uint8_t *w, __m256i x, __m256i x8, __m256i multiples) {
    return q4_0_unpacked_lanes(q4_0_unpack(w), x, x8, multiples);
}

/* q4_0_lanes's x8 for activation quants x. */
static inline __m256i q4_0_offset(__m256i x) {
    return _mm256_maddubs_epi16(_mm256_set1_epi8(8), x);
}

static float dot_q4_0(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q4_0_BLOCK, a += Q8_0_BYTES) {
        __m256i x = load256(a + Q8_0_QS);
        __m256i lanes = q4_0_lanes(w, x, q4_0_offset(x), q8_0_multiples(a));
        acc = fmaf(half(w) * load_f32(a), (float)sum_i32x8(lanes), acc);
    }
    return acc;
}

/*
 * dot_q4_0 for four weight rows against one activation row. A row's block is so little work that its lane
 * reduction and fmadd would be much of it: four rows share the activations' loads and offset products, their
 * block integers are summed together (sums_i32x8) and scaled by one fma, row q in lane q.
 */
static void dot4_q4_0(const uint8_t *w, int64_t stride, const uint8_t *a, int blocks, float *out, int64_t out_step) {
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += Q4_0_BLOCK, a += Q8_0_BYTES) {
        __m256i x = load256(a + Q8_0_QS), x8 = q4_0_offset(x), m = q8_0_multiples(a);
        __m128i t = sums_i32x8(q4_0_lanes(w, x, x8, m), q4_0_lanes(w + stride, x, x8, m),
                               q4_0_lanes(w + 2 * stride, x, x8, m), q4_0_lanes(w + 3 * stride, x, x8, m));
        __m128 d = _mm_mul_ps(_mm_setr_ps(half(w), half(w + stride), half(w + 2 * stride), half(w + 3 * stride)),
                              _mm_set1_ps(load_f32(a)));
        acc = _mm_fmadd_ps(d, _mm_cvtepi32_ps(t), acc);
    }
    float sums[4];
    _mm_storeu_ps(sums, acc);
    for (int q = 0; q < 4; q++) out[q * out_step] = sums[q];
}

/*
 * Multi-row kernels: F_rows(w, a, act_row_bytes, blocks, out, out_stride, R) computes out[r·out_stride] = dot_F(w,
 * activation row r) for the R (2..FS_ROWS) rows from a, each by the same integers and float operations as dot_F,
 * but unpacks each weight block once for all R: its bits, kept in registers, go against the R rows' activations,
 * each row with its own eight accumulators. R is a constant at every call (FS_ROWS_KERNELS), so the loops over
 * rows unroll.
 */
#define FS_ROWS 4
#define FS_ALWAYS_INLINE static inline __attribute__((always_inline))
/* Unrolls the loop that follows (over rows or chunks): GCC at -O2 keeps them rolled, the accumulators in memory. */
#define FS_UNROLL _Pragma("GCC unroll 8")

/*
 * Q8_0 and Q4_0 against R activation rows: a block's 32 signed weights (Q4_0: nibbles − 8) shared by the rows, the
 * sign trick per row (for Q4_0 one product fewer than q·x − 8·x); the rows' block integers summed together
 * (sums_i32x8), so their float accumulators are the lanes of one vector, row r in lane r, and a block is one vector
 * fma for all of them.
 */
FS_ALWAYS_INLINE void signed_32_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks,
                                     float *out, int64_t out_stride, const int R, const int q4_0) {
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += q4_0 ? Q4_0_BLOCK : Q8_0_BLOCK, a += Q8_0_BYTES) {
        __m256i q = q4_0 ? _mm256_sub_epi8(q4_0_unpack(w), _mm256_set1_epi8(8)) : load256(w + 2);
        __m256i magnitudes = _mm256_sign_epi8(q, q);
        __m256i lanes[FS_ROWS];
        float da[FS_ROWS];
        FS_UNROLL
        for (int r = 0; r < FS_ROWS; r++) {
            lanes[r] = _mm256_setzero_si256();
            da[r] = 0.0f;
            if (r < R) {
                const uint8_t *x = a + r * act_row_bytes;
                lanes[r] = q8_0_lanes(magnitudes, _mm256_sign_epi8(load256(x + Q8_0_QS), q), q8_0_multiples(x));
                da[r] = load_f32(x);
            }
        }
        __m128 d = _mm_mul_ps(_mm_set1_ps(half(w)), _mm_setr_ps(da[0], da[1], da[2], da[3]));
        acc = _mm_fmadd_ps(d, _mm_cvtepi32_ps(sums_i32x8(lanes[0], lanes[1], lanes[2], lanes[3])), acc);
    }
    float sums[4];
    _mm_storeu_ps(sums, acc);
    FS_UNROLL
    for (int r = 0; r < R; r++) out[r * out_stride] = sums[r];
}

FS_ALWAYS_INLINE void q8_0_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,
                                int64_t out_stride, const int R) {
    signed_32_rows(w, a, act_row_bytes, blocks, out, out_stride, R, 0);
}

FS_ALWAYS_INLINE void q4_0_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,
                                int64_t out_stride, const int R) {
    signed_32_rows(w, a, act_row_bytes, blocks, out, out_stride, R, 1);
}

/* A vector of int16 whose every lane is int16 lane `index` (0..7) of the 128-bit value both halves of v hold. */
static inline __m256i broadcast_i16(__m256i v, int index) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16((short)((2 * index + 1) << 8 | 2 * index)));
}

/*
 * The scales of a 32-weight chunk, as int16 for vpmaddwd: `both` holds 8 int16 scales (groups 2·run, 2·run + 1 of
 * the chunk at index 2·run, 2·run + 1) in each 128-bit half; the result has the chunk's first group's scale in the
 * low 128 bits (its first 16 weights) and its second group's in the high 128 bits.
 */
static inline __m256i chunk_scales(__m256i both, int run) {
    char a = (char)(4 * run), b = (char)(4 * run + 1), c = (char)(4 * run + 2), d = (char)(4 * run + 3);
    return _mm256_shuffle_epi8(both, _mm256_setr_epi8(a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b,
                                                      c, d, c, d, c, d, c, d, c, d, c, d, c, d, c, d));
}

/*
 * Q4_K's and Q5_K's min term, Σ_g min_g·(sum16[2g] + sum16[2g + 1]) in int32, from the 8 int16 mins in the high
 * half of scales_mins and the activation block's 16 sums.
 */
static inline int32_t k_min_sum(__m256i scales_mins, const uint8_t *a) {
    __m256i sums = load256(a + Q8_K_SUMS);
    __m128i group_sums = _mm_hadd_epi16(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    return sum_i32x4(_mm_madd_epi16(_mm256_extracti128_si256(scales_mins, 1), group_sums));
}

/* Q4_K's and Q5_K's 8 group scales (low 128 bits) and 8 mins (high), as int16, from the block's 12 scale bytes. */
static inline __m256i k_scales_mins(const uint8_t *scales) {
    uint32_t sc[2], mn[2];
    q4_k_scales(scales, sc, mn);
    return _mm256_cvtepu8_epi16(_mm_setr_epi32((int)sc[0], (int)sc[1], (int)mn[0], (int)mn[1]));
}

/*
 * The lanes of 64 Q4_K weights, two groups (32 bytes q: the first group in the low nibbles, the second in the high),
 * against their 64 activations x, each group times its int16 scale. Pairs ≤ 2·15·127: inside int16.
 */
static inline __m256i q4_k_pair(const uint8_t *q, const uint8_t *x, __m256i scale_low, __m256i scale_high) {
    const __m256i low = _mm256_set1_epi8(0xF);
    __m256i qv = load256(q);
    __m256i p_low = _mm256_maddubs_epi16(_mm256_and_si256(qv, low), load256(x));
    __m256i p_high = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(qv, 4), low), load256(x + 32));
    return _mm256_add_epi32(_mm256_madd_epi16(p_low, scale_low), _mm256_madd_epi16(p_high, scale_high));
}

/* Pairs written out, not looped: see q6_k_half. */
static float dot_q4_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f, mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q4_K_BLOCK, a += Q8_K_BYTES) {
        prefetch_block(w + 2 * Q4_K_BLOCK, Q4_K_BLOCK);
        float da = load_f32(a);
        /* The 8 scales and 8 mins, each times its chunk's multiple. */
        __m256i scales_mins = _mm256_mullo_epi16(k_scales_mins(w + 4), chunk_multiples(a)); /* ≤ 63·16 */
        int32_t min_sum = k_min_sum(scales_mins, a);
        __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(scales_mins));
        const uint8_t *x = a + Q8_K_QS, *q = w + 16;
        __m256i s01 = _mm256_add_epi32(q4_k_pair(q, x, broadcast_i16(s, 0), broadcast_i16(s, 1)),
                                       q4_k_pair(q + 32, x + 64, broadcast_i16(s, 2), broadcast_i16(s, 3)));
        __m256i s23 = _mm256_add_epi32(q4_k_pair(q + 64, x + 128, broadcast_i16(s, 4), broadcast_i16(s, 5)),
                                       q4_k_pair(q + 96, x + 192, broadcast_i16(s, 6), broadcast_i16(s, 7)));
        acc = fmaf(da * half(w), (float)sum_i32x8(_mm256_add_epi32(s01, s23)), acc);
        mins = fmaf(da * half(w + 2), (float)min_sum, mins);
    }
    return acc - mins;
}

/*
 * A chunk's int16 scale for vpmaddwd from a table of scale pairs (the int16 scale twice in an int32): a broadcast
 * load, so the load ports rather than the shuffle unit spread each row's scales.
 */
static inline __m256i scale_pair(const int32_t *pairs, int c) {
    return _mm256_set1_epi32(pairs[c]);
}

/* The 8 int16 scales s as 8 scale pairs at pairs. */
static inline void store_scale_pairs(__m128i s, int32_t pairs[8]) {
    _mm_storeu_si128((__m128i *)pairs, _mm_unpacklo_epi16(s, s));
    _mm_storeu_si128((__m128i *)(pairs + 4), _mm_unpackhi_epi16(s, s));
}

/* The products of a chunk's unsigned weights q and activations x in int16 pairs, times its scale, into lanes. */
static inline __m256i scaled_chunk(__m256i lanes, __m256i q, const uint8_t *x, __m256i scale) {
    return dot_i16(lanes, _mm256_maddubs_epi16(q, load256(x)), scale);
}

/*
 * The rows' block integers T and min integers M are summed to the lanes of one vector each (row r in lane r), so
 * a block's float scaling is two vector fmas for all the rows.
 */
FS_ALWAYS_INLINE void q4_k_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,
                                int64_t out_stride, const int R) {
    const __m256i low = _mm256_set1_epi8(0xF);
    __m128 acc = _mm_setzero_ps(), mins = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += Q4_K_BLOCK, a += Q8_K_BYTES) {
        __m256i scales_mins = k_scales_mins(w + 4);
        __m256i q[8];
        FS_UNROLL
        for (int p = 0; p < 4; p++) {
            __m256i qv = load256(w + 16 + 32 * p);
            q[2 * p] = _mm256_and_si256(qv, low);
            q[2 * p + 1] = _mm256_and_si256(_mm256_srli_epi16(qv, 4), low);
        }
        __m256i lanes[FS_ROWS];
        int32_t min_sums[FS_ROWS];
        float da[FS_ROWS];
        FS_UNROLL
        for (int r = 0; r < FS_ROWS; r++) {
            lanes[r] = _mm256_setzero_si256();
            min_sums[r] = 0;
            da[r] = 0.0f;
            if (r < R) {
                const uint8_t *ar = a + r * act_row_bytes, *x = ar + Q8_K_QS;
                __m256i products = _mm256_mullo_epi16(scales_mins, chunk_multiples(ar)); /* ≤ 63·16 */
                int32_t pairs[8];
                store_scale_pairs(_mm256_castsi256_si128(products), pairs);
                __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
                FS_UNROLL
                for (int c = 0; c < 8; c += 2) {
                    s0 = scaled_chunk(s0, q[c], x + 32 * c, scale_pair(pairs, c));
                    s1 = scaled_chunk(s1, q[c + 1], x + 32 * c + 32, scale_pair(pairs, c + 1));
                }
                lanes[r] = _mm256_add_epi32(s0, s1);
                min_sums[r] = k_min_sum(products, ar);
                da[r] = load_f32(ar);
            }
        }
        __m128 das = _mm_setr_ps(da[0], da[1], da[2], da[3]);
        __m128i t = sums_i32x8(lanes[0], lanes[1], lanes[2], lanes[3]);
        acc = _mm_fmadd_ps(_mm_mul_ps(das, _mm_set1_ps(half(w))), _mm_cvtepi32_ps(t), acc);
        mins = _mm_fmadd_ps(_mm_mul_ps(das, _mm_set1_ps(half(w + 2))),
                            _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)min_sums)), mins);
    }
    float sums[4];
    _mm_storeu_ps(sums, _mm_sub_ps(acc, mins));
    FS_UNROLL
    for (int r = 0; r < R; r++) out[r * out_stride] = sums[r];
}

/*
 * (q − 32)·x for one 32-weight chunk of Q6_K, as int16 pairs q·x − 32·x: each term and the result inside int16
 * (≤ 2·63·127), times the chunk's two group scales, into int32 lanes.
 */
static inline __m256i q6_k_chunk(__m256i q, const uint8_t *x, __m256i scales) {
    __m256i xv = load256(x);
    __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q, xv), _mm256_maddubs_epi16(_mm256_set1_epi8(32), xv));
    return _mm256_madd_epi16(p, scales);
}

/*
 * The lanes of half a Q6_K block (four chunks) against their 128 activations x: ql holds the low nibbles of the
 * first two chunks (low) and of the last two (high nibbles), qh the top two bits of all four, scales8 the half's 8
 * int8 group scales, multiples their 8 groups' multiples as int16. Written out chunk by chunk: GCC at -O2 keeps a
 * loop over the chunks rolled, spilling the unpacked weights to the stack and building each chunk_scales mask at
 * run time.
 */
static inline __m256i q6_k_half(const uint8_t *ql, const uint8_t *qh, const uint8_t *x, const uint8_t *scales8,
                                __m128i multiples) {
    const __m256i low = _mm256_set1_epi8(0xF), two = _mm256_set1_epi8(0x30);
    __m128i scales = _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)scales8));
    __m256i both = _mm256_broadcastsi128_si256(_mm_mullo_epi16(scales, multiples)); /* ≤ 128·16 */
    __m256i ql0 = load256(ql), ql1 = load256(ql + 32), h = load256(qh);
    /* Each chunk's two top bits moved to bits 4..5 of its byte (16-bit shifts, then masked per byte). */
    __m256i q0 = _mm256_or_si256(_mm256_and_si256(ql0, low), _mm256_and_si256(_mm256_slli_epi16(h, 4), two));
    __m256i q1 = _mm256_or_si256(_mm256_and_si256(ql1, low), _mm256_and_si256(_mm256_slli_epi16(h, 2), two));
    __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low), _mm256_and_si256(h, two));
    __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low),
                                 _mm256_and_si256(_mm256_srli_epi16(h, 2), two));
    /* Two independent sums: integer addition is exact in any order, and the chains stay short. */
    __m256i s01 = _mm256_add_epi32(q6_k_chunk(q0, x, chunk_scales(both, 0)),
                                   q6_k_chunk(q1, x + 32, chunk_scales(both, 1)));
    __m256i s23 = _mm256_add_epi32(q6_k_chunk(q2, x + 64, chunk_scales(both, 2)),
                                   q6_k_chunk(q3, x + 96, chunk_scales(both, 3)));
    return _mm256_add_epi32(s01, s23);
}

static float dot_q6_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float acc = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q6_K_BLOCK, a += Q8_K_BYTES) {
        prefetch_block(w + 2 * Q6_K_BLOCK, Q6_K_BLOCK);
        __m256i multiples = group_multiples(a);
        __m256i lanes = _mm256_add_epi32(
                q6_k_half(w, w + 128, a + Q8_K_QS, w + 192, _mm256_castsi256_si128(multiples)),
                q6_k_half(w + 64, w + 160, a + Q8_K_QS + 128, w + 200, _mm256_extracti128_si256(multiples, 1)));
        acc = fmaf(load_f32(a) * half(w + 208), (float)sum_i32x8(lanes), acc);
    }
    return acc;
}

/* dot_q6_k for four weight rows against one activation row, as dot4_q4_0. */
static void dot4_q6_k(const uint8_t *w, int64_t stride, const uint8_t *a, int blocks, float *out, int64_t out_step) {
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += Q6_K_BLOCK, a += Q8_K_BYTES) {
        __m256i multiples = group_multiples(a), lanes[4];
        for (int q = 0; q < 4; q++) {
            const uint8_t *row = w + q * stride;
            prefetch_block(row + 2 * Q6_K_BLOCK, Q6_K_BLOCK);
            lanes[q] = _mm256_add_epi32(
                    q6_k_half(row, row + 128, a + Q8_K_QS, row + 192, _mm256_castsi256_si128(multiples)),
                    q6_k_half(row + 64, row + 160, a + Q8_K_QS + 128, row + 200, _mm256_extracti128_si256(multiples, 1)));
        }
        __m128 d = _mm_mul_ps(_mm_set1_ps(load_f32(a)), _mm_setr_ps(half(w + 208), half(w + stride + 208),
                                                                     half(w + 2 * stride + 208), half(w + 3 * stride + 208)));
        acc = _mm_fmadd_ps(d, _mm_cvtepi32_ps(sums_i32x8(lanes[0], lanes[1], lanes[2], lanes[3])), acc);
    }
    float sums[4];
    _mm_storeu_ps(sums, acc);
    for (int q = 0; q < 4; q++) out[q * out_step] = sums[q];
}

/*
 * The products of a chunk's signed weights q (|q| ≤ 32) and activations x in int16 pairs by the sign trick, times
 * the chunk's scales, into lanes.
 */
static inline __m256i signed_chunk(__m256i lanes, __m256i q, __m256i magnitudes, const uint8_t *x, __m256i scales) {
    return dot_i16(lanes, _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(load256(x), q)), scales);
}

/*
 * The 16 group scales of a 16-group format times the activation block's group multiples, each half (chunks 0..3,
 * 4..7) in both 128-bit halves, as chunk_scales takes them.
 */
static inline void group_scales(__m256i scales16, const uint8_t *a, __m256i halves[2]) {
    __m256i products = _mm256_mullo_epi16(scales16, group_multiples(a));
    halves[0] = _mm256_permute4x64_epi64(products, 0x44);
    halves[1] = _mm256_permute4x64_epi64(products, 0xEE);
}

/*
 * One block of Q6_K or Q3_K (their 8 chunks as signed bytes q, |q| in magnitudes, 16 int16 group scales) against
 * each of R activation rows: per row its group scales times its chunk multiples and the lanes by the sign trick.
 */
FS_ALWAYS_INLINE void signed_block_lanes(__m256i lanes[], const __m256i q[8], const __m256i magnitudes[8],
                                         __m256i scales16, const uint8_t *a, int64_t act_row_bytes, const int R) {
    FS_UNROLL
    for (int r = 0; r < R; r++) {
        const uint8_t *ar = a + r * act_row_bytes, *x = ar + Q8_K_QS;
        __m256i halves[2], s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
        group_scales(scales16, ar, halves);
        FS_UNROLL
        for (int c = 0; c < 8; c += 2) {
            s0 = signed_chunk(s0, q[c], magnitudes[c], x + 32 * c, chunk_scales(halves[c / 4], c % 4));
            s1 = signed_chunk(s1, q[c + 1], magnitudes[c + 1], x + 32 * c + 32, chunk_scales(halves[c / 4], c % 4 + 1));
        }
        lanes[r] = _mm256_add_epi32(s0, s1);
    }
}

/*
 * Q6_K's weights as signed bytes q − 32 (the rows share them), by the sign trick against each row; the rows' block
 * integers summed to the lanes of one vector (row r in lane r), a block's float scaling one vector fma.
 */
FS_ALWAYS_INLINE void q6_k_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,
                                int64_t out_stride, const int R) {
    const __m256i low = _mm256_set1_epi8(0xF), two = _mm256_set1_epi8(0x30), offset = _mm256_set1_epi8(32);
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += Q6_K_BLOCK, a += Q8_K_BYTES) {
        __m256i q[8], magnitudes[8];
        FS_UNROLL
        for (int h = 0; h < 2; h++) {
            __m256i ql0 = load256(w + 64 * h), ql1 = load256(w + 64 * h + 32), hb = load256(w + 128 + 32 * h);
            q[4 * h] = _mm256_or_si256(_mm256_and_si256(ql0, low), _mm256_and_si256(_mm256_slli_epi16(hb, 4), two));
            q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(ql1, low),
                                           _mm256_and_si256(_mm256_slli_epi16(hb, 2), two));
            q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low),
                                           _mm256_and_si256(hb, two));
            q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low),
                                           _mm256_and_si256(_mm256_srli_epi16(hb, 2), two));
        }
        FS_UNROLL
        for (int c = 0; c < 8; c++) {
            q[c] = _mm256_sub_epi8(q[c], offset);
            magnitudes[c] = _mm256_sign_epi8(q[c], q[c]);
        }
        __m256i lanes[FS_ROWS];
        float da[FS_ROWS];
        FS_UNROLL
        for (int r = 0; r < FS_ROWS; r++) {
            lanes[r] = _mm256_setzero_si256();
            da[r] = r < R ? load_f32(a + r * act_row_bytes) : 0.0f;
        }
        /* Scales ≤ 128·16 in magnitude. */
        signed_block_lanes(lanes, q, magnitudes, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 192))),
                           a, act_row_bytes, R);
        __m128 d = _mm_mul_ps(_mm_setr_ps(da[0], da[1], da[2], da[3]), _mm_set1_ps(half(w + 208)));
        acc = _mm_fmadd_ps(d, _mm_cvtepi32_ps(sums_i32x8(lanes[0], lanes[1], lanes[2], lanes[3])), acc);
    }
    float sums[4];
    _mm_storeu_ps(sums, acc);
    FS_UNROLL
    for (int r = 0; r < R; r++) out[r * out_stride] = sums[r];
}

/*
 * The lanes of 64 Q5_K weights, two groups (32 bytes q: the first group's low 4 bits in the low nibbles, the
 * second's in the high; their fifth bits are bits 0 and 1 of hbits), against their 64 activations x, each group
 * times its int16 scale. Pairs ≤ 2·31·127: inside int16.
 */
static inline __m256i q5_k_pair(const uint8_t *q, __m256i hbits, const uint8_t *x, __m256i scale_low,
                                __m256i scale_high) {
    const __m256i low = _mm256_set1_epi8(0xF), bit4 = _mm256_set1_epi8(0x10);
    __m256i qv = load256(q);
    /* 16-bit shifts, masked per byte. */
    __m256i q_low = _mm256_or_si256(_mm256_and_si256(qv, low), _mm256_and_si256(_mm256_slli_epi16(hbits, 4), bit4));
    __m256i q_high = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qv, 4), low),
                                     _mm256_and_si256(_mm256_slli_epi16(hbits, 3), bit4));
    __m256i p_low = _mm256_maddubs_epi16(q_low, load256(x)), p_high = _mm256_maddubs_epi16(q_high, load256(x + 32));
    return _mm256_add_epi32(_mm256_madd_epi16(p_low, scale_low), _mm256_madd_epi16(p_high, scale_high));
}

/* Pairs written out, not looped: see q6_k_half. */
static float dot_q5_k(const uint8_t *w, const uint8_t *a, int blocks) {
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q5_K_BLOCK, a += Q8_K_BYTES) {
        prefetch_block(w + 2 * Q5_K_BLOCK, Q5_K_BLOCK);
        float da = load_f32(a);
        __m256i scales_mins = _mm256_mullo_epi16(k_scales_mins(w + 4), chunk_multiples(a)); /* ≤ 63·16 */
        int32_t min_sum = k_min_sum(scales_mins, a);
        __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(scales_mins)), qh = load256(w + 16);
        const uint8_t *x = a + Q8_K_QS, *q = w + 48;
        /* Group g's fifth bit is bit g of each qh byte. */
        __m256i s01 = _mm256_add_epi32(
                q5_k_pair(q, qh, x, broadcast_i16(s, 0), broadcast_i16(s, 1)),
                q5_k_pair(q + 32, _mm256_srli_epi16(qh, 2), x + 64, broadcast_i16(s, 2), broadcast_i16(s, 3)));
        __m256i s23 = _mm256_add_epi32(
                q5_k_pair(q + 64, _mm256_srli_epi16(qh, 4), x + 128, broadcast_i16(s, 4), broadcast_i16(s, 5)),
                q5_k_pair(q + 96, _mm256_srli_epi16(qh, 6), x + 192, broadcast_i16(s, 6), broadcast_i16(s, 7)));
        acc = add_lanes(acc, da * half(w), _mm256_add_epi32(s01, s23));
        mins = fmaf(da * half(w + 2), (float)min_sum, mins);
    }
    return sum_vector(acc) - mins;
}

FS_ALWAYS_INLINE void q5_k_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,
                                int64_t out_stride, const int R) {
    const __m256i low = _mm256_set1_epi8(0xF), bit4 = _mm256_set1_epi8(0x10);
    __m256 acc[FS_ROWS];
    float mins[FS_ROWS];
    FS_UNROLL
    for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps(), mins[r] = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q5_K_BLOCK, a += Q8_K_BYTES) {
        __m256i scales_mins = k_scales_mins(w + 4);
        float d = half(w), dmin = half(w + 2);
        __m256i q[8], qh = load256(w + 16);
        FS_UNROLL
        for (int p = 0; p < 4; p++) {
            /* Group g's fifth bit is bit g of each qh byte; 16-bit shifts, masked per byte. */
            __m256i qv = load256(w + 48 + 32 * p), hbits = _mm256_srli_epi16(qh, 2 * p);
            q[2 * p] = _mm256_or_si256(_mm256_and_si256(qv, low), _mm256_and_si256(_mm256_slli_epi16(hbits, 4), bit4));
            q[2 * p + 1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qv, 4), low),
                                           _mm256_and_si256(_mm256_slli_epi16(hbits, 3), bit4));
        }
        FS_UNROLL
        for (int r = 0; r < R; r++) {
            const uint8_t *ar = a + r * act_row_bytes, *x = ar + Q8_K_QS;
            __m256i products = _mm256_mullo_epi16(scales_mins, chunk_multiples(ar)); /* ≤ 63·16 */
            int32_t pairs[8];
            store_scale_pairs(_mm256_castsi256_si128(products), pairs);
            __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
            FS_UNROLL
            for (int c = 0; c < 8; c += 2) { /* pairs ≤ 2·31·127 */
                s0 = scaled_chunk(s0, q[c], x + 32 * c, scale_pair(pairs, c));
                s1 = scaled_chunk(s1, q[c + 1], x + 32 * c + 32, scale_pair(pairs, c + 1));
            }
            float da = load_f32(ar);
            acc[r] = add_lanes(acc[r], da * d, _mm256_add_epi32(s0, s1));
            mins[r] = fmaf(da * dmin, (float)k_min_sum(products, ar), mins[r]);
        }
    }
    FS_UNROLL
    for (int r = 0; r < R; r++) out[r * out_stride] = sum_vector(acc[r]) - mins[r];
}

/*
 * The lanes of half a Q2_K block (four chunks, two bits each of the 32 bytes qs) against their 128 activations x;
 * scales: the half's 8 int16 group scales in each 128-bit half. Written out chunk by chunk: see q6_k_half.
 */
static inline __m256i q2_k_half(const uint8_t *qs, const uint8_t *x, __m256i scales) {
    const __m256i two = _mm256_set1_epi8(3);
    __m256i q = load256(qs);
    /* Pairs ≤ 2·3·127. */
    __m256i p0 = _mm256_maddubs_epi16(_mm256_and_si256(q, two), load256(x));
    __m256i p1 = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 2), two), load256(x + 32));
    __m256i p2 = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), two), load256(x + 64));
    __m256i p3 = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 6), two), load256(x + 96));
    __m256i s01 = _mm256_add_epi32(_mm256_madd_epi16(p0, chunk_scales(scales, 0)),
                                   _mm256_madd_epi16(p1, chunk_scales(scales, 1)));
    __m256i s23 = _mm256_add_epi32(_mm256_madd_epi16(p2, chunk_scales(scales, 2)),
                                   _mm256_madd_epi16(p3, chunk_scales(scales, 3)));
    return _mm256_add_epi32(s01, s23);
}

static float dot_q2_k(const uint8_t *w, const uint8_t *a, int blocks) {
    const __m128i low = _mm_set1_epi8(0xF);
    float acc = 0.0f, mins = 0.0f;
    for (int b = 0; b < blocks; b++, w += Q2_K_BLOCK, a += Q8_K_BYTES) {
        prefetch_block(w + 2 * Q2_K_BLOCK, Q2_K_BLOCK);
        float da = load_f32(a);
        __m128i packed = _mm_loadu_si128((const __m128i *)w);
        __m256i multiples = group_multiples(a); /* scales and mins ≤ 15·16 */
        __m256i scales16 = _mm256_mullo_epi16(_mm256_cvtepu8_epi16(_mm_and_si128(packed, low)), multiples);
        __m256i mins16 = _mm256_mullo_epi16(_mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low)),
                                            multiples);
        __m256i min_products = _mm256_madd_epi16(mins16, load256(a + Q8_K_SUMS)); /* Σ_g min_g·sum16[g] */
        /* Each half's scales in both 128-bit halves. */
        __m256i scales_low = _mm256_permute4x64_epi64(scales16, 0x44);
        __m256i scales_high = _mm256_permute4x64_epi64(scales16, 0xEE);
        __m256i lanes = _mm256_add_epi32(q2_k_half(w + 16, a + Q8_K_QS, scales_low),
                                         q2_k_half(w + 48, a + Q8_K_QS + 128, scales_high));
        /* T and the mins' M, each the sum of its eight lanes, reduced together. */
        __m256i pairs = _mm256_hadd_epi32(lanes, min_products);
        __m128i sums = _mm_add_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
        sums = _mm_hadd_epi32(sums, sums);
        acc = fmaf(da * half(w + 80), (float)_mm_cvtsi128_si32(sums), acc);
        mins = fmaf(da * half(w + 82), (float)_mm_extract_epi32(sums, 1), mins);
    }
    return acc - mins;
}

/* The rows' block integers T and min integers M summed to the lanes of one vector each, as q4_k_rows. */
FS_ALWAYS_INLINE void q2_k_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,
                                int64_t out_stride, const int R) {
    const __m128i low4 = _mm_set1_epi8(0xF);
    const __m256i low2 = _mm256_set1_epi8(3);
    __m128 acc = _mm_setzero_ps(), mins = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += Q2_K_BLOCK, a += Q8_K_BYTES) {
        __m128i packed = _mm_loadu_si128((const __m128i *)w);
        __m256i scales16 = _mm256_cvtepu8_epi16(_mm_and_si128(packed, low4));
        __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
        __m256i q[8];
        FS_UNROLL
        for (int h = 0; h < 2; h++) {
            __m256i qs = load256(w + 16 + 32 * h);
            FS_UNROLL
            for (int j = 0; j < 4; j++) q[4 * h + j] = _mm256_and_si256(_mm256_srli_epi16(qs, 2 * j), low2);
        }
        __m256i lanes[FS_ROWS];
        int32_t min_sums[FS_ROWS];
        float da[FS_ROWS];
        FS_UNROLL
        for (int r = 0; r < FS_ROWS; r++) {
            lanes[r] = _mm256_setzero_si256();
            min_sums[r] = 0;
            da[r] = 0.0f;
            if (r < R) {
                const uint8_t *ar = a + r * act_row_bytes, *x = ar + Q8_K_QS;
                __m256i halves[2], s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
                group_scales(scales16, ar, halves); /* scales and mins ≤ 15·16; pairs ≤ 2·3·127 */
                FS_UNROLL
                for (int c = 0; c < 8; c += 2) {
                    s0 = scaled_chunk(s0, q[c], x + 32 * c, chunk_scales(halves[c / 4], c % 4));
                    s1 = scaled_chunk(s1, q[c + 1], x + 32 * c + 32, chunk_scales(halves[c / 4], c % 4 + 1));
                }
                lanes[r] = _mm256_add_epi32(s0, s1);
                __m256i min_products = _mm256_madd_epi16(_mm256_mullo_epi16(mins16, group_multiples(ar)),
                                                         load256(ar + Q8_K_SUMS));
                min_sums[r] = sum_i32x8(min_products);
                da[r] = load_f32(ar);
            }
        }
        __m128 das = _mm_setr_ps(da[0], da[1], da[2], da[3]);
        __m128i t = sums_i32x8(lanes[0], lanes[1], lanes[2], lanes[3]);
        acc = _mm_fmadd_ps(_mm_mul_ps(das, _mm_set1_ps(half(w + 80))), _mm_cvtepi32_ps(t), acc);
        mins = _mm_fmadd_ps(_mm_mul_ps(das, _mm_set1_ps(half(w + 82))),
                            _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)min_sums)), mins);
    }
    float sums[4];
    _mm_storeu_ps(sums, _mm_sub_ps(acc, mins));
    FS_UNROLL
    for (int r = 0; r < R; r++) out[r * out_stride] = sums[r];
}

/*
 * Q3_K's weights as signed bytes −4..3, the scales unpacked once for the rows; the sign trick against each row;
 * the rows' block integers summed to the lanes of one vector (row r in lane r), a block's float scaling one fma.
 */
FS_ALWAYS_INLINE void q3_k_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,
                                int64_t out_stride, const int R) {
    const __m256i two = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < blocks; b++, w += Q3_K_BLOCK, a += Q8_K_BYTES) {
        uint32_t scale_bytes[4];
        q3_k_scale_bytes(w + 96, scale_bytes);
        __m128i stored = _mm_setr_epi32((int)scale_bytes[0], (int)scale_bytes[1], (int)scale_bytes[2], (int)scale_bytes[3]);
        __m256i scales16 = _mm256_sub_epi16(_mm256_cvtepu8_epi16(stored), _mm256_set1_epi16(32)), hmask = load256(w);
        __m256i q[8], magnitudes[8];
        FS_UNROLL
        for (int c = 0; c < 8; c++) {
            __m256i low = _mm256_and_si256(_mm256_srli_epi16(load256(w + 32 + 32 * (c / 4)), 2 * (c % 4)), two);
            /* 4 where the weight's hmask bit c is clear. */
            __m256i bit = _mm256_and_si256(_mm256_srli_epi16(hmask, c), one);
            __m256i offset = _mm256_slli_epi16(_mm256_xor_si256(bit, one), 2);
            q[c] = _mm256_sub_epi8(low, offset);
            magnitudes[c] = _mm256_sign_epi8(q[c], q[c]);
        }
        __m256i lanes[FS_ROWS];
        float da[FS_ROWS];
        FS_UNROLL
        for (int r = 0; r < FS_ROWS; r++) {
            lanes[r] = _mm256_setzero_si256();
            da[r] = r < R ? load_f32(a + r * act_row_bytes) : 0.0f;
        }
        signed_block_lanes(lanes, q, magnitudes, scales16, a, act_row_bytes, R); /* scales ≤ 32·16; pairs ≤ 2·4·127 */
        __m128 d = _mm_mul_ps(_mm_setr_ps(da[0], da[1], da[2], da[3]), _mm_set1_ps(half(w + 108)));
        acc = _mm_fmadd_ps(d, _mm_cvtepi32_ps(sums_i32x8(lanes[0], lanes[1], lanes[2], lanes[3])), acc);
    }
    float sums[4];
    _mm_storeu_ps(sums, acc);
    FS_UNROLL
    for (int r = 0; r < R; r++) out[r * out_stride] = sums[r];
}

/*
 * One row of Q3_K: the rows kernel with one activation row. A loop of its own over the chunks (GCC keeps it rolled,
 * building each chunk_scales mask at run time and shifting by a count in a register) ran decode at a quarter of the
 * four-row kernel's speed per row.
 */
static float dot_q3_k(const uint8_t *w, const uint8_t *a, int blocks) {
    float out;
    q3_k_rows(w, a, 0, blocks, &out, 0, 1);
    return out;
}

static float dot_iq2_xxs(const uint8_t *w, const uint8_t *a, int blocks) {
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < blocks; b++, w += IQ2_XXS_BLOCK, a += Q8_K_BYTES) {
        __m256i lanes = _mm256_setzero_si256();
        for (int g = 0; g < 8; g++) {
            uint32_t grid = load_u32(w + 2 + 8 * g), signs = load_u32(w + 6 + 8 * g);
            __m256i magnitudes = _mm256_setr_epi64x(
                    (long long)iq2xxs_grid[grid & 0xFF], (long long)iq2xxs_grid[(grid >> 8) & 0xFF],
                    (long long)iq2xxs_grid[(grid >> 16) & 0xFF], (long long)iq2xxs_grid[grid >> 24]);
            __m256i sign = _mm256_setr_epi64x(
                    (long long)iq2_signs[signs & 0x7F], (long long)iq2_signs[(signs >> 7) & 0x7F],
                    (long long)iq2_signs[(signs >> 14) & 0x7F], (long long)iq2_signs[(signs >> 21) & 0x7F]);
            /* |w| times x with w's sign: pairs ≤ 2·43·127. */
            __m256i p = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(load256(a + Q8_K_QS + 32 * g), sign));
            int scale = (2 * (int)(signs >> 28) + 1) * load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * g);
            lanes = dot_i16(lanes, p, _mm256_set1_epi16((short)scale));
        }
        acc = add_lanes(acc, load_f32(a) * (0.125f * half(w)), lanes);
    }
    return sum_vector(acc);
}

/* IQ2_XXS's grid and sign lookups once for the rows; the groups' scales 2s + 1 times each row's multiples. */
FS_ALWAYS_INLINE void iq2_xxs_rows(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks,
                                   float *out, int64_t out_stride, const int R) {
    __m256 acc[FS_ROWS];
    FS_UNROLL
    for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps();
    for (int b = 0; b < blocks; b++, w += IQ2_XXS_BLOCK, a += Q8_K_BYTES) {
        __m256i magnitudes[8], sign[8];
        int16_t scale_values[8];
        FS_UNROLL
        for (int g = 0; g < 8; g++) {
            uint32_t grid = load_u32(w + 2 + 8 * g), signs = load_u32(w + 6 + 8 * g);
            magnitudes[g] = _mm256_setr_epi64x(
                    (long long)iq2xxs_grid[grid & 0xFF], (long long)iq2xxs_grid[(grid >> 8) & 0xFF],
                    (long long)iq2xxs_grid[(grid >> 16) & 0xFF], (long long)iq2xxs_grid[grid >> 24]);
            sign[g] = _mm256_setr_epi64x(
                    (long long)iq2_signs[signs & 0x7F], (long long)iq2_signs[(signs >> 7) & 0x7F],
                    (long long)iq2_signs[(signs >> 14) & 0x7F], (long long)iq2_signs[(signs >> 21) & 0x7F]);
            scale_values[g] = (int16_t)(2 * (signs >> 28) + 1);
        }
        __m128i scales = _mm_loadu_si128((const __m128i *)scale_values);
        float d = 0.125f * half(w);
        FS_UNROLL
        for (int r = 0; r < R; r++) {
            const uint8_t *ar = a + r * act_row_bytes, *x = ar + Q8_K_QS;
            int32_t pairs[8];
            store_scale_pairs(_mm_mullo_epi16(scales, _mm256_castsi256_si128(chunk_multiples(ar))), pairs);
            __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
            FS_UNROLL
            for (int g = 0; g < 8; g += 2) { /* pairs ≤ 2·43·127 */
                s0 = dot_i16(s0, _mm256_maddubs_epi16(magnitudes[g], _mm256_sign_epi8(load256(x + 32 * g), sign[g])),
                             scale_pair(pairs, g));
                s1 = dot_i16(s1, _mm256_maddubs_epi16(magnitudes[g + 1],
                                                      _mm256_sign_epi8(load256(x + 32 * g + 32), sign[g + 1])),
                             scale_pair(pairs, g + 1));
            }
            acc[r] = add_lanes(acc[r], load_f32(ar) * d, _mm256_add_epi32(s0, s1));
        }
    }
    FS_UNROLL
    for (int r = 0; r < R; r++) out[r * out_stride] = sum_vector(acc[r]);
}

/* F_rows2 .. F_rows4: F_rows for a constant R. */
#define FS_ROWS_KERNELS(F)                                                                                           \
    static void F##_rows2(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,         \
                          int64_t out_stride) {                                                                      \
        F##_rows(w, a, act_row_bytes, blocks, out, out_stride, 2);                                                   \
    }                                                                                                                \
    static void F##_rows3(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,         \
                          int64_t out_stride) {                                                                      \
        F##_rows(w, a, act_row_bytes, blocks, out, out_stride, 3);                                                   \
    }                                                                                                                \
    static void F##_rows4(const uint8_t *w, const uint8_t *a, int64_t act_row_bytes, int blocks, float *out,         \
                          int64_t out_stride) {                                                                      \
        F##_rows(w, a, act_row_bytes, blocks, out, out_stride, 4);                                                   \
    }

/* One activation row against weight rows row_from..row_to - 1, one row at a time: decode's loop. */
#define FS_DECODE_ROWS(F)                                                                                            \
    static void F##_decode(const uint8_t *weights, int64_t row_bytes, int row_from, int row_to, const uint8_t *a,    \
                           int blocks, float *out) {                                                                 \
        for (int i = row_from; i < row_to; i++) out[i] = dot_##F(weights + (int64_t)i * row_bytes, a, blocks);       \
    }

/*
 * dot4_F's decode loop (Q8_0, Q4_0, Q6_K: a block's lane reduction and fma, which four rows share, are much of its
 * work): weight rows four at a time, i with i + n/4, i + n/2 and i + 3n/4 of the slice's n, and dot_F for the
 * last n % 4. Sequential streams, not neighbouring rows: reading rows i and i + 1 side by side ran at a third of
 * the speed on a 151936-row matrix.
 */
#define FS_DECODE_ROWS4(F)                                                                                           \
    static void F##_decode(const uint8_t *weights, int64_t row_bytes, int row_from, int row_to, const uint8_t *a,    \
                           int blocks, float *out) {                                                                 \
        int quarter = (row_to - row_from) / 4;                                                                       \
        for (int i = row_from; i < row_from + quarter; i++)                                                          \
            dot4_##F(weights + (int64_t)i * row_bytes, quarter * row_bytes, a, blocks, out + i, quarter);            \
        for (int i = row_from + 4 * quarter; i < row_to; i++)                                                        \
            out[i] = dot_##F(weights + (int64_t)i * row_bytes, a, blocks);                                           \
    }

/*
 * fs_matmul_F_V: activation rows FS_ROWS at a time, each group over the slice's weight rows by F_rows (one weight
 * row, its blocks unpacked once for the group); a last single row by F_decode. Every output is dot_F of its two
 * rows, whatever the grouping.
 */
#define FS_MATMUL_ROWS(F, V, ELEMENTS, ACT_BYTES) FS_MATMUL_ROWS_EXPANDED(F, V, ELEMENTS, ACT_BYTES)
#define FS_MATMUL_ROWS_EXPANDED(F, V, ELEMENTS, ACT_BYTES)                                                           \
    FS_ROWS_KERNELS(F)                                                                                               \
    FS_API void fs_matmul_##F##_##V(const void *w, int64_t row_bytes, int row_from, int row_to, const void *act,     \
                                    int act_rows, int k, float *out, int64_t out_stride) {                           \
        const uint8_t *weights = w, *acts = act;                                                                     \
        int blocks = k / (ELEMENTS);                                                                                 \
        int64_t act_row_bytes = (int64_t)blocks * (ACT_BYTES);                                                       \
        for (int r0 = 0; r0 < act_rows; r0 += FS_ROWS) {                                                             \
            int n = act_rows - r0 < FS_ROWS ? act_rows - r0 : FS_ROWS;                                               \
            const uint8_t *a = acts + r0 * act_row_bytes;                                                            \
            float *o = out + r0 * out_stride;                                                                        \
            if (n == 1) {                                                                                            \
                F##_decode(weights, row_bytes, row_from, row_to, a, blocks, o);                                      \
                continue;                                                                                            \
            }                                                                                                        \
            for (int i = row_from; i < row_to; i++) {                                                                \
                const uint8_t *row = weights + (int64_t)i * row_bytes;                                               \
                if (n == 4) F##_rows4(row, a, act_row_bytes, blocks, o + i, out_stride);                             \
                else if (n == 3) F##_rows3(row, a, act_row_bytes, blocks, o + i, out_stride);                        \
                else F##_rows2(row, a, act_row_bytes, blocks, o + i, out_stride);                                    \
            }                                                                                                        \
        }                                                                                                            \
    }

FS_DECODE_ROWS4(q8_0)
FS_DECODE_ROWS4(q4_0)
FS_DECODE_ROWS(q4_k)
FS_DECODE_ROWS4(q6_k)
FS_DECODE_ROWS(q5_k)
FS_DECODE_ROWS(q2_k)
FS_DECODE_ROWS(q3_k)
FS_DECODE_ROWS(iq2_xxs)

FS_MATMUL_ROWS(q8_0, FS_VARIANT, 32, Q8_0_BYTES)
FS_MATMUL_ROWS(q4_0, FS_VARIANT, 32, Q8_0_BYTES)
FS_MATMUL_ROWS(q4_k, FS_VARIANT, 256, Q8_K_BYTES)
FS_MATMUL_ROWS(q6_k, FS_VARIANT, 256, Q8_K_BYTES)
FS_MATMUL_ROWS(q5_k, FS_VARIANT, 256, Q8_K_BYTES)
FS_MATMUL_ROWS(q2_k, FS_VARIANT, 256, Q8_K_BYTES)
FS_MATMUL_ROWS(q3_k, FS_VARIANT, 256, Q8_K_BYTES)
FS_MATMUL_ROWS(iq2_xxs, FS_VARIANT, 256, Q8_K_BYTES)

/*
 * The repacked kernels (repacked.h): a vector holds one int32 or float per weight row, XV rows of a group of 16 —
 * avx512 all 16 in a zmm, avx2 and avxvnni 8 in a ymm, each group in two halves. Per 4-byte step of a chunk a
 * load gives the rows' 4 nibble bytes; against the activation's 4 bytes at that step, broadcast, one vpdpbusd (or
 * vpmaddubsw) sums 4 products per row. A chunk's 8 steps give the rows' Σ q·a, times the rows' s_c·m_c; the block's
 * T (and M) then take one vector fma for the rows, per activation row. Activation rows go FS_ROWS at a time, each
 * step's weights unpacked once for them.
 */
#if defined(__AVX512F__)
#define XV 16
/*
 * Q4_0's vectors of rows per pass: two groups, each activation row's multiples made once for both (four groups
 * need more than the 32 registers and were slower; one group, a fifth slower).
 */
#define X16_VECTORS 2
typedef __m512i xi;
typedef __m512 xf;
#define xi_load(p) _mm512_loadu_si512((const void *)(p))
#define xi_zero() _mm512_setzero_si512()
#define xi_set1_8(v) _mm512_set1_epi8(v)
#define xi_set1_32(v) _mm512_set1_epi32(v)
#define xi_and(a, b) _mm512_and_si512(a, b)
#define xi_srli16(a, n) _mm512_srli_epi16(a, n)
#define xi_add32(a, b) _mm512_add_epi32(a, b)
#define xi_sub32(a, b) _mm512_sub_epi32(a, b)
#define xi_mul32(a, b) _mm512_mullo_epi32(a, b)
#define xi_mul16(a, b) _mm512_mullo_epi16(a, b)
#define xi_or(a, b) _mm512_or_si512(a, b)
#define xi_slli32(a, n) _mm512_slli_epi32(a, n)
#define xi_srli32(a, n) _mm512_srli_epi32(a, n)
#define xi_madd16(acc, a, b) _mm512_dpwssd_epi32(acc, a, b)
#define xi_u8to32(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define xi_s8to32(p) _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define xi_slli16(a, n) _mm512_slli_epi16(a, n)
#define xf_cvt(a) _mm512_cvtepi32_ps(a)
#define xf_set1(v) _mm512_set1_ps(v)
#define xf_zero() _mm512_setzero_ps()
#define xf_load(p) _mm512_loadu_ps((const float *)(p))
#define xf_half(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define xf_mul(a, b) _mm512_mul_ps(a, b)
#define xf_sub(a, b) _mm512_sub_ps(a, b)
#define xf_fma(a, b, c) _mm512_fmadd_ps(a, b, c)
#define xf_store(p, v) _mm512_storeu_ps(p, v)
/* Products of a step summed straight into int32: pairs of steps need no int16 stage. */
#define xi_dot(acc, u, p) _mm512_dpbusd_epi32(acc, u, _mm512_set1_epi32((int)load_u32(p)))
#define xi_pairs(u, p) _mm512_maddubs_epi16(u, _mm512_set1_epi32((int)load_u32(p)))
#define xi_table(p) _mm512_load_si512((const void *)(p))
#define xi_lookup8(t, i) _mm512_shuffle_epi8(t, i)
#define xi_maddubs(u, s) _mm512_maddubs_epi16(u, s)
#define xi_abs8(a) _mm512_abs_epi8(a)
/*
 * a negated where w is negative (AVX-512 has no vpsignb: a masked subtraction by w's sign bits). Where w is 0, a
 * stays, unlike vpsignb's 0: it meets |w| = 0, and the products are the same.
 */
#define xi_sign8(a, w) _mm512_mask_sub_epi8(a, _mm512_movepi8_mask(w), _mm512_setzero_si512(), a)
#else
#define XV 8
#define X16_VECTORS 2 /* a group's two halves (one half a pass: avx2 a tenth slower) */
typedef __m256i xi;
typedef __m256 xf;
#define xi_load(p) _mm256_loadu_si256((const __m256i *)(p))
#define xi_zero() _mm256_setzero_si256()
#define xi_set1_8(v) _mm256_set1_epi8(v)
#define xi_set1_32(v) _mm256_set1_epi32(v)
#define xi_and(a, b) _mm256_and_si256(a, b)
#define xi_srli16(a, n) _mm256_srli_epi16(a, n)
#define xi_add32(a, b) _mm256_add_epi32(a, b)
#define xi_sub32(a, b) _mm256_sub_epi32(a, b)
#define xi_mul32(a, b) _mm256_mullo_epi32(a, b)
#define xi_mul16(a, b) _mm256_mullo_epi16(a, b)
#define xi_or(a, b) _mm256_or_si256(a, b)
#define xi_slli32(a, n) _mm256_slli_epi32(a, n)
#define xi_srli32(a, n) _mm256_srli_epi32(a, n)
#define xi_madd16(acc, a, b) dot_i16(acc, a, b)
#define xi_u8to32(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define xi_s8to32(p) _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define xi_slli16(a, n) _mm256_slli_epi16(a, n)
#define xi_pairs(u, p) _mm256_maddubs_epi16(u, _mm256_set1_epi32((int)load_u32(p)))
#define xi_maddubs(u, s) _mm256_maddubs_epi16(u, s)
#define xi_abs8(a) _mm256_abs_epi8(a)
#define xi_sign8(a, w) _mm256_sign_epi8(a, w)
#define xf_cvt(a) _mm256_cvtepi32_ps(a)
#define xf_set1(v) _mm256_set1_ps(v)
#define xf_zero() _mm256_setzero_ps()
#define xf_load(p) _mm256_loadu_ps((const float *)(p))
#define xf_half(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define xf_mul(a, b) _mm256_mul_ps(a, b)
#define xf_sub(a, b) _mm256_sub_ps(a, b)
#define xf_fma(a, b, c) _mm256_fmadd_ps(a, b, c)
#define xf_store(p, v) _mm256_storeu_ps(p, v)
#ifdef FS_VNNI
#define xi_dot(acc, u, p) FS_DPBUSD(acc, u, _mm256_set1_epi32((int)load_u32(p)))
#define xi_table(p) _mm256_load_si256((const __m256i *)(p))
#define xi_lookup8(t, i) _mm256_shuffle_epi8(t, i)
#else
#define FS_X16_INT16_SUMS 1
/*
 * avx2: a chunk's 8 steps summed in int16 pairs (each ≤ 2·15·127, the 8 ≤ 30480: no saturation), then to int32 by
 * one vpmaddwd.
 */
#define xi_dot(acc, u, p) _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, _mm256_set1_epi32((int)load_u32(p))))
#endif
#endif

/*
 * Per activation row and block, what the Q4_K kernel takes from the Q8_K block, as int16 pairs for vpmullw and
 * vpmaddwd: each chunk multiple twice (m_c | m_c << 16), and per chunk pair p the multiples (m_2p, m_2p+1) and
 * the chunks' sums of quants (Σ_2p, Σ_2p+1; each ≤ 32·127).
 */
struct q8_k_terms {
    int32_t multiples[8], multiple_pairs[4], sum_pairs[4];
};

static inline int32_t int16_pair(int32_t low, int32_t high) {
    return (int32_t)((uint32_t)(uint16_t)low | (uint32_t)(uint16_t)high << 16);
}

static inline void q8_k_terms_of(const uint8_t *a, struct q8_k_terms *t) {
    int32_t m[8], sums[8];
    for (int c = 0; c < 8; c++) {
        m[c] = load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
        sums[c] = load_i16(a + Q8_K_SUMS + 4 * c) + load_i16(a + Q8_K_SUMS + 4 * c + 2);
        t->multiples[c] = int16_pair(m[c], m[c]);
    }
    for (int p = 0; p < 4; p++) {
        t->multiple_pairs[p] = int16_pair(m[2 * p], m[2 * p + 1]);
        t->sum_pairs[p] = int16_pair(sums[2 * p], sums[2 * p + 1]);
    }
}

/*
 * A chunk's rows' products, summed (VNNI: int32 lanes; avx2: int16 pairs), times the rows' s_c·m_c into t. scale
 * holds each row's s_c in the low int16 of its lane and 0 (VNNI) or s_c again (avx2) in the high one, so that one
 * vpmullw by (m_c, m_c) gives s_c·m_c (≤ 63·16) as the int32 (or as the pair) the sums take.
 */
static inline xi add_scaled_chunk(xi t, xi sum, xi scale, int32_t multiple) {
    xi scale_m = xi_mul16(scale, xi_set1_32(multiple));
#ifdef FS_X16_INT16_SUMS
    return xi_madd16(t, sum, scale_m);
#else
    return xi_add32(t, xi_mul32(sum, scale_m));
#endif
}

/* A chunk's 8 rows' 6-bit scales as add_scaled_chunk takes them. */
static inline xi chunk_scales_x16(const uint8_t *p) {
    xi s = xi_u8to32(p);
#ifdef FS_X16_INT16_SUMS
    s = xi_or(s, xi_slli32(s, 16));
#endif
    return s;
}

/*
 * XV rows (from row `first` of the group) of group-blocks gb.. against R activation rows (a, act_row_bytes;
 * terms[r·blocks + b] their q8_k_terms), out[r·out_stride + i] for the XV rows i.
 */
FS_ALWAYS_INLINE void q4_k_x16_rows(const uint8_t *gb, int first, const uint8_t *a, int64_t act_row_bytes,
                                    const struct q8_k_terms *terms, int blocks, float *out, int64_t out_stride,
                                    const int R, const int H) {
    const xi low = xi_set1_8(0xF);
    xf acc[FS_ROWS], mins[FS_ROWS]; /* [h·R + r]: H·R ≤ FS_ROWS */
    FS_UNROLL
    for (int v = 0; v < H * R; v++) acc[v] = xf_zero(), mins[v] = xf_zero();
    for (int b = 0; b < blocks; b++, gb += Q4_K_X16_BLOCK, a += Q8_K_BYTES) {
        xi t[FS_ROWS], m[FS_ROWS];
        FS_UNROLL
        for (int v = 0; v < H * R; v++) t[v] = xi_zero(), m[v] = xi_zero();
        FS_UNROLL
        for (int p = 0; p < 4; p++) {
            xi lo_sum[FS_ROWS], hi_sum[FS_ROWS];
            FS_UNROLL
            for (int v = 0; v < H * R; v++) lo_sum[v] = xi_zero(), hi_sum[v] = xi_zero();
            FS_UNROLL
            for (int l = 0; l < 8; l++) {
                FS_UNROLL
                for (int h = 0; h < H; h++) {
                    xi w = xi_load(gb + Q4_K_X16_QS + 512 * p + 64 * l + 4 * (first + XV * h));
                    xi lo = xi_and(w, low), hi = xi_and(xi_srli16(w, 4), low);
                    FS_UNROLL
                    for (int r = 0; r < R; r++) {
                        const uint8_t *x = a + r * act_row_bytes + Q8_K_QS + 64 * p + 4 * l;
                        lo_sum[h * R + r] = xi_dot(lo_sum[h * R + r], lo, x);
                        hi_sum[h * R + r] = xi_dot(hi_sum[h * R + r], hi, x + 32);
                    }
                }
            }
            FS_UNROLL
            for (int h = 0; h < H; h++) {
                int rows = first + XV * h;
                xi scale_lo = chunk_scales_x16(gb + Q4_K_X16_SCALES + 16 * (2 * p) + rows);
                xi scale_hi = chunk_scales_x16(gb + Q4_K_X16_SCALES + 16 * (2 * p + 1) + rows);
                /* The rows' (min_2p, min_2p+1) as int16 pairs. */
                xi min_pair = xi_or(xi_u8to32(gb + Q4_K_X16_MINS + 16 * (2 * p) + rows),
                                    xi_slli32(xi_u8to32(gb + Q4_K_X16_MINS + 16 * (2 * p + 1) + rows), 16));
                FS_UNROLL
                for (int r = 0; r < R; r++) { /* s_c·m_c ≤ 63·16, times Σ q·a ≤ 32·15·127: int32 */
                    const struct q8_k_terms *q = terms + r * blocks + b;
                    int v = h * R + r;
                    t[v] = add_scaled_chunk(t[v], lo_sum[v], scale_lo, q->multiples[2 * p]);
                    t[v] = add_scaled_chunk(t[v], hi_sum[v], scale_hi, q->multiples[2 * p + 1]);
                    /* min_c·m_c ≤ 63·16 times the chunk's sum ≤ 32·127, two chunks per vpmaddwd */
                    xi min_m = xi_mul16(min_pair, xi_set1_32(q->multiple_pairs[p]));
                    m[v] = xi_madd16(m[v], min_m, xi_set1_32(q->sum_pairs[p]));
                }
            }
        }
        FS_UNROLL
        for (int h = 0; h < H; h++) {
            xf d = xf_load(gb + Q4_K_X16_D + 4 * (first + XV * h));
            xf dmin = xf_load(gb + Q4_K_X16_DMIN + 4 * (first + XV * h));
            FS_UNROLL
            for (int r = 0; r < R; r++) {
                xf da = xf_set1(load_f32(a + r * act_row_bytes));
                acc[h * R + r] = xf_fma(xf_mul(da, d), xf_cvt(t[h * R + r]), acc[h * R + r]);
                mins[h * R + r] = xf_fma(xf_mul(da, dmin), xf_cvt(m[h * R + r]), mins[h * R + r]);
            }
        }
    }
    FS_UNROLL
    for (int h = 0; h < H; h++)
        FS_UNROLL
        for (int r = 0; r < R; r++) xf_store(out + r * out_stride + XV * h, xf_sub(acc[h * R + r], mins[h * R + r]));
}

#ifdef FS_VNNI
/*
 * q·m for a nibble q (the index) and a Q8_0 activation multiple m ≤ 16 (the row): ≤ 240, an unsigned byte, so that
 * one vpshufb gives a step's nibbles times their group's multiple and one vpdpbusd sums them against the
 * activation's quants.
 */
static const uint8_t q4_0_times[17][64] __attribute__((aligned(64))) = {
#define FS_TIMES16(m) 0, m, 2 * m, 3 * m, 4 * m, 5 * m, 6 * m, 7 * m, 8 * m, 9 * m, 10 * m, 11 * m, 12 * m, 13 * m, 14 * m, 15 * m
#define FS_TIMES(m) {FS_TIMES16(m), FS_TIMES16(m), FS_TIMES16(m), FS_TIMES16(m)}
    FS_TIMES(0), FS_TIMES(1), FS_TIMES(2),  FS_TIMES(3),  FS_TIMES(4),  FS_TIMES(5),  FS_TIMES(6),  FS_TIMES(7),  FS_TIMES(8),
    FS_TIMES(9), FS_TIMES(10), FS_TIMES(11), FS_TIMES(12), FS_TIMES(13), FS_TIMES(14), FS_TIMES(15), FS_TIMES(16),
#undef FS_TIMES
};
#endif

/*
 * Q4_0's multiple of group g (0..7) of activation block x, in the form q4_0_x16_group takes it: looked up (VNNI,
 * several activation rows), the table of q·m_g (a nibble's product, by vpshufb); else m_g as int16 pairs.
 */
static inline xi q4_0_x16_multiple(const uint8_t *x, int g, const int lookup) {
#ifdef FS_VNNI
    if (lookup) return xi_table(q4_0_times[q8_0_multiple(x, g)]);
#else
    (void)lookup; /* avx2: no vpdpbusd, whose sums of four the table needs */
#endif
    return xi_set1_32((int)load_u32(x + Q8_0_MULTIPLES + 4 * g));
}

/*
 * sum + the rows' m_g·Σ q·a of group g (its nibbles q, the activation block x, multiple its q4_0_x16_multiple):
 * looked up, q·m_g summed against the quants by one vpdpbusd (≤ 4·240·127 a lane); else q·a summed into int16 pairs
 * by vpmaddubsw (≤ 2·15·127), then times m_g into int32 by vpmaddwd or vpdpwssd. The lookup pays where several
 * activation rows share the weights' nibbles (two zmm instructions per group, as the pairs, but no multiply
 * competing with vpdpbusd); decoding, its table loads made the kernel a fifth slower.
 */
static inline xi q4_0_x16_group(xi sum, xi q, xi multiple, const uint8_t *x, int g, const int lookup) {
#ifdef FS_VNNI
    if (lookup) return xi_dot(sum, xi_lookup8(multiple, q), x + Q8_0_QS + 4 * g);
#else
    (void)lookup;
#endif
    return xi_madd16(sum, xi_pairs(q, x + Q8_0_QS + 4 * g), multiple);
}

/*
 * Likewise for Q4_0, V vectors of XV rows (vector v: rows first + XV·v.. of the groups from gb on, group_bytes
 * apart) against R activation rows; eights[r·blocks + b] is 8·Σ_g m_g·Σ a of activation row r's block b (T = Σ_g
 * m_g·Σ q·a − that), scales[r·blocks + b] its d. A step's low nibbles are group l, its high ones group 4 + l; each
 * row's multiple of a group is made once for the V vectors.
 */
_Static_assert(X16_VECTORS >= X16_ROWS / XV, "a pass holds decode's group");
FS_ALWAYS_INLINE void q4_0_x16_rows(const uint8_t *gb, int64_t group_bytes, int first, const uint8_t *a,
                                    int64_t act_row_bytes, const int32_t *eights, const float *scales, int blocks,
                                    float *out, int64_t out_stride, const int R, const int V) {
    const xi low = xi_set1_8(0xF);
    xf acc[X16_VECTORS][FS_ROWS];
    FS_UNROLL
    for (int v = 0; v < V; v++)
        FS_UNROLL
        for (int r = 0; r < R; r++) acc[v][r] = xf_zero();
    for (int b = 0; b < blocks; b++, gb += Q4_0_X16_BLOCK, a += Q8_0_BYTES) {
        /* vector v's group-block and its rows' offset there */
#define FS_GROUP_BLOCK(v) (gb + (first + XV * (v)) / X16_ROWS * group_bytes)
#define FS_FIRST(v) ((first + XV * (v)) % X16_ROWS)
        xi sum[X16_VECTORS][FS_ROWS];
        FS_UNROLL
        for (int v = 0; v < V; v++)
            FS_UNROLL
            for (int r = 0; r < R; r++) sum[v][r] = xi_set1_32(-eights[r * blocks + b]);
        FS_UNROLL
        for (int l = 0; l < 4; l++) {
            xi lo[X16_VECTORS], hi[X16_VECTORS];
            FS_UNROLL
            for (int v = 0; v < V; v++) {
                xi w = xi_load(FS_GROUP_BLOCK(v) + Q4_0_X16_QS + 64 * l + 4 * FS_FIRST(v));
                lo[v] = xi_and(w, low), hi[v] = xi_and(xi_srli16(w, 4), low);
            }
            FS_UNROLL
            for (int r = 0; r < R; r++) {
                const uint8_t *x = a + r * act_row_bytes;
                xi m_lo = q4_0_x16_multiple(x, l, R > 1), m_hi = q4_0_x16_multiple(x, 4 + l, R > 1);
                FS_UNROLL
                for (int v = 0; v < V; v++) {
                    sum[v][r] = q4_0_x16_group(sum[v][r], lo[v], m_lo, x, l, R > 1);
                    sum[v][r] = q4_0_x16_group(sum[v][r], hi[v], m_hi, x, 4 + l, R > 1);
                }
            }
        }
        FS_UNROLL
        for (int v = 0; v < V; v++) {
            xf d = xf_half(FS_GROUP_BLOCK(v) + Q4_0_X16_D + 2 * FS_FIRST(v));
            FS_UNROLL
            for (int r = 0; r < R; r++)
                acc[v][r] = xf_fma(xf_mul(d, xf_set1(scales[r * blocks + b])), xf_cvt(sum[v][r]), acc[v][r]);
        }
#undef FS_GROUP_BLOCK
#undef FS_FIRST
    }
    FS_UNROLL
    for (int v = 0; v < V; v++)
        FS_UNROLL
        for (int r = 0; r < R; r++) xf_store(out + r * out_stride + XV * v, acc[v][r]);
}

/*
 * Likewise for Q8_0: a step is one activation group (weights 4l..4l + 3, multiple m_l). The signed weights by the
 * sign trick: |q| shared by the activation rows, each row's 4 quants, broadcast, with the rows' weight signs; then
 * vpmaddubsw into the rows' int16 pairs (≤ 2·128·127) and times m_l into their int32 by vpmaddwd or vpdpwssd.
 */
FS_ALWAYS_INLINE void q8_0_x16_rows(const uint8_t *gb, int first, const uint8_t *a, int64_t act_row_bytes, int blocks,
                                    float *out, int64_t out_stride, const int R, const int H) {
    xf acc[FS_ROWS]; /* [h·R + r]: H·R ≤ FS_ROWS */
    FS_UNROLL
    for (int v = 0; v < H * R; v++) acc[v] = xf_zero();
    for (int b = 0; b < blocks; b++, gb += Q8_0_X16_BLOCK, a += Q8_0_BYTES) {
        xi sum[FS_ROWS];
        FS_UNROLL
        for (int v = 0; v < H * R; v++) sum[v] = xi_zero();
        FS_UNROLL
        for (int l = 0; l < 8; l++)
            FS_UNROLL
            for (int h = 0; h < H; h++) {
                xi w = xi_load(gb + Q8_0_X16_QS + 64 * l + 4 * (first + XV * h)), magnitudes = xi_abs8(w);
                FS_UNROLL
                for (int r = 0; r < R; r++) {
                    const uint8_t *x = a + r * act_row_bytes;
                    xi signed_x = xi_sign8(xi_set1_32((int)load_u32(x + Q8_0_QS + 4 * l)), w);
                    xi m = xi_set1_32((int)load_u32(x + Q8_0_MULTIPLES + 4 * l));
                    sum[h * R + r] = xi_madd16(sum[h * R + r], xi_maddubs(magnitudes, signed_x), m);
                }
            }
        FS_UNROLL
        for (int h = 0; h < H; h++) {
            xf d = xf_half(gb + Q8_0_X16_D + 2 * (first + XV * h));
            FS_UNROLL
            for (int r = 0; r < R; r++) {
                xf da = xf_set1(load_f32(a + r * act_row_bytes));
                acc[h * R + r] = xf_fma(xf_mul(d, da), xf_cvt(sum[h * R + r]), acc[h * R + r]);
            }
        }
    }
    FS_UNROLL
    for (int h = 0; h < H; h++)
        FS_UNROLL
        for (int r = 0; r < R; r++) xf_store(out + r * out_stride + XV * h, acc[h * R + r]);
}

/*
 * fs_matmul_F_x16_V of a K-quant F whose kernel takes per-block terms of the Q8_K activation (struct T_terms, made by
 * T_terms_of): activation rows FS_ROWS at a time, their terms tabulated once (on the stack: 64 bytes per Q8_K block
 * and row), then every group of the slice, XV rows at a time; one activation row (decode) takes a group's 16 rows at
 * once (H = 2 halves on ymm), each 64-byte step read whole. Q4_0 and Q8_0 have drivers of their own below.
 */
#define FS_K_QUANT_X16_MATMUL(F, BLOCK, T)                                                                             \
    FS_API void FS_EXPORT(fs_matmul_##F##_x16)(const void *packed, int row_from, int row_to, const void *act,         \
                                               int act_rows, int k, float *out, int64_t out_stride) {                  \
        int blocks = k / 256;                                                                                          \
        int64_t act_row_bytes = (int64_t)blocks * Q8_K_BYTES, group_bytes = (int64_t)blocks * BLOCK;                 \
        for (int r0 = 0; r0 < act_rows; r0 += FS_ROWS) {                                                               \
            int n = act_rows - r0 < FS_ROWS ? act_rows - r0 : FS_ROWS;                                                 \
            const uint8_t *a = (const uint8_t *)act + r0 * act_row_bytes;                                              \
            struct T##_terms terms[n * blocks];                                                                        \
            for (int r = 0; r < n; r++)                                                                                \
                for (int b = 0; b < blocks; b++)                                                                       \
                    T##_terms_of(a + r * act_row_bytes + b * Q8_K_BYTES, &terms[r * blocks + b]);                      \
            for (int g = row_from / X16_ROWS; g < row_to / X16_ROWS; g++)                                              \
                for (int first = 0; first < X16_ROWS; first += n == 1 ? X16_ROWS : XV) {                               \
                    const uint8_t *gb = (const uint8_t *)packed + g * group_bytes;                                     \
                    float *o = out + r0 * out_stride + X16_ROWS * g + first;                                           \
                    switch (n) {                                                                                       \
                    case 1: F##_x16_rows(gb, 0, a, act_row_bytes, terms, blocks, o, out_stride, 1, X16_ROWS / XV); break; \
                    case 2: F##_x16_rows(gb, first, a, act_row_bytes, terms, blocks, o, out_stride, 2, 1); break;     \
                    case 3: F##_x16_rows(gb, first, a, act_row_bytes, terms, blocks, o, out_stride, 3, 1); break;     \
                    default: F##_x16_rows(gb, first, a, act_row_bytes, terms, blocks, o, out_stride, 4, 1); break;    \
                    }                                                                                                  \
                }                                                                                                      \
        }                                                                                                              \
    }
FS_K_QUANT_X16_MATMUL(q4_k, Q4_K_X16_BLOCK, q8_k)

FS_API void FS_EXPORT(fs_matmul_q4_0_x16)(const void *packed, int row_from, int row_to, const void *act,
                                          int act_rows, int k, float *out, int64_t out_stride) {
    int blocks = k / 32;
    int64_t act_row_bytes = (int64_t)blocks * Q8_0_BYTES, group_bytes = (int64_t)blocks * Q4_0_X16_BLOCK;
    for (int r0 = 0; r0 < act_rows; r0 += FS_ROWS) {
        int n = act_rows - r0 < FS_ROWS ? act_rows - r0 : FS_ROWS;
        const uint8_t *a = (const uint8_t *)act + r0 * act_row_bytes;
        int32_t eights[n * blocks];
        float scales[n * blocks];
        for (int r = 0; r < n; r++)
            for (int b = 0; b < blocks; b++) {
                const uint8_t *block = a + r * act_row_bytes + b * Q8_0_BYTES;
                eights[r * blocks + b] = 8 * q8_0_weighted_sum(block);
                scales[r * blocks + b] = load_f32(block);
            }
        /*
         * Decode: one group at a time (two groups' streams read the LM head at half the speed). Several activation
         * rows: X16_VECTORS vectors of rows at a time while the slice has them, then one.
         */
        for (int row = row_from; row < row_to;) {
            const uint8_t *gb = (const uint8_t *)packed + row / X16_ROWS * group_bytes;
            int first = row % X16_ROWS, many = row_to - row >= X16_VECTORS * XV;
            float *o = out + r0 * out_stride + row;
#define FS_Q4_0_X16(R, V)                                                                                              \
    q4_0_x16_rows(gb, group_bytes, first, a, act_row_bytes, eights, scales, blocks, o, out_stride, R, V)
            switch (n == 1 ? 0 : n * 2 + many) {
            case 0: FS_Q4_0_X16(1, X16_ROWS / XV); break;
            case 4: FS_Q4_0_X16(2, 1); break;
            case 5: FS_Q4_0_X16(2, X16_VECTORS); break;
            case 6: FS_Q4_0_X16(3, 1); break;
            case 7: FS_Q4_0_X16(3, X16_VECTORS); break;
            case 8: FS_Q4_0_X16(4, 1); break;
            default: FS_Q4_0_X16(4, X16_VECTORS); break;
            }
#undef FS_Q4_0_X16
            row += n == 1 ? X16_ROWS : many ? X16_VECTORS * XV : XV;
        }
    }
}

FS_API void FS_EXPORT(fs_matmul_q8_0_x16)(const void *packed, int row_from, int row_to, const void *act,
                                          int act_rows, int k, float *out, int64_t out_stride) {
    int blocks = k / 32;
    int64_t act_row_bytes = (int64_t)blocks * Q8_0_BYTES, group_bytes = (int64_t)blocks * Q8_0_X16_BLOCK;
    for (int r0 = 0; r0 < act_rows; r0 += FS_ROWS) {
        int n = act_rows - r0 < FS_ROWS ? act_rows - r0 : FS_ROWS;
        const uint8_t *a = (const uint8_t *)act + r0 * act_row_bytes;
        for (int g = row_from / X16_ROWS; g < row_to / X16_ROWS; g++)
            for (int first = 0; first < X16_ROWS; first += n == 1 ? X16_ROWS : XV) {
                const uint8_t *gb = (const uint8_t *)packed + g * group_bytes;
                float *o = out + r0 * out_stride + X16_ROWS * g + first;
#define FS_Q8_0_X16(R) q8_0_x16_rows(gb, first, a, act_row_bytes, blocks, o, out_stride, R, 1)
                switch (n) {
                case 1: q8_0_x16_rows(gb, 0, a, act_row_bytes, blocks, o, out_stride, 1, X16_ROWS / XV); break;
                case 2: FS_Q8_0_X16(2); break;
                case 3: FS_Q8_0_X16(3); break;
                default: FS_Q8_0_X16(4); break;
                }
#undef FS_Q8_0_X16
            }
    }
}

/*
 * Per activation row and block, what the Q6_K kernel takes from the Q8_K block, as int32 for broadcast loads: each
 * group's −32·(sum of its quants), the start of its Σ (q − 32)·a, and each chunk's multiple (an int16 pair (m_c, 0)
 * for vpmaddwd).
 */
struct q6_k_terms {
    int32_t offsets[16], multiples[8];
};

static inline void q6_k_terms_of(const uint8_t *a, struct q6_k_terms *t) {
    for (int g = 0; g < 16; g++) t->offsets[g] = -32 * load_i16(a + Q8_K_SUMS + 2 * g);
    for (int c = 0; c < 8; c++) t->multiples[c] = load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
}

#ifdef FS_X16_INT16_SUMS
/* avx2: a step's products in int16 pairs (≤ 2·63·127), at once to int32: a group's four steps would overflow. */
#define q6_k_x16_dot(acc, u, p) xi_madd16(acc, xi_pairs(u, p), xi_set1_32(0x10001))
#else
#define q6_k_x16_dot(acc, u, p) xi_dot(acc, u, p)
#endif

/*
 * Likewise for Q6_K (XV rows from row `first` of the group, R activation rows, terms[r·blocks + b] their
 * q6_k_terms). Per half of the block (chunks 4h..4h + 3) and per group half (steps 0..3: each chunk's first group,
 * 4..7: its second) the four chunks' group sums start at −32·Σa and take 4 steps of q·a (q the unsigned 6 bits:
 * Σ (q − 32)·a, ≤ 16·32·127); then times the rows' s_g·m_c (vpmaddwd of the sign-extended scale by (m_c, 0)) into
 * the rows' T.
 */
FS_ALWAYS_INLINE void q6_k_x16_rows(const uint8_t *gb, int first, const uint8_t *a, int64_t act_row_bytes,
                                    const struct q6_k_terms *terms, int blocks, float *out, int64_t out_stride,
                                    const int R, const int H) {
    const xi low = xi_set1_8(0xF), top = xi_set1_8(0x30);
    xf acc[FS_ROWS]; /* [h·R + r]: H·R ≤ FS_ROWS */
    FS_UNROLL
    for (int v = 0; v < H * R; v++) acc[v] = xf_zero();
    for (int b = 0; b < blocks; b++, gb += Q6_K_X16_BLOCK, a += Q8_K_BYTES) {
        xi t[FS_ROWS];
        FS_UNROLL
        for (int v = 0; v < H * R; v++) t[v] = xi_zero();
        FS_UNROLL
        for (int half = 0; half < 2; half++)
            FS_UNROLL
            for (int gh = 0; gh < 2; gh++) {
                xi sum[4][FS_ROWS]; /* [chunk 4·half + j][h·R + r] */
                FS_UNROLL
                for (int j = 0; j < 4; j++)
                    FS_UNROLL
                    for (int v = 0; v < H * R; v++)
                        sum[j][v] = xi_set1_32(terms[v % R * blocks + b].offsets[2 * (4 * half + j) + gh]);
                FS_UNROLL
                for (int l = 4 * gh; l < 4 * gh + 4; l++)
                    FS_UNROLL
                    for (int h = 0; h < H; h++) {
                        const uint8_t *step = gb + Q6_K_X16_QS + 1536 * half + 192 * l + 4 * (first + XV * h);
                        xi ql0 = xi_load(step), ql1 = xi_load(step + 64), qh = xi_load(step + 128);
                        /* Each chunk's two top bits moved to bits 4..5 of its byte (16-bit shifts, masked per byte). */
                        xi q[4] = {xi_or(xi_and(ql0, low), xi_and(xi_slli16(qh, 4), top)),
                                   xi_or(xi_and(ql1, low), xi_and(xi_slli16(qh, 2), top)),
                                   xi_or(xi_and(xi_srli16(ql0, 4), low), xi_and(qh, top)),
                                   xi_or(xi_and(xi_srli16(ql1, 4), low), xi_and(xi_srli16(qh, 2), top))};
                        FS_UNROLL
                        for (int r = 0; r < R; r++) {
                            const uint8_t *x = a + r * act_row_bytes + Q8_K_QS + 128 * half + 4 * l;
                            FS_UNROLL
                            for (int j = 0; j < 4; j++) sum[j][h * R + r] = q6_k_x16_dot(sum[j][h * R + r], q[j], x + 32 * j);
                        }
                    }
                FS_UNROLL
                for (int j = 0; j < 4; j++) {
                    int c = 4 * half + j;
                    FS_UNROLL
                    for (int h = 0; h < H; h++) {
                        xi scale = xi_s8to32(gb + Q6_K_X16_SCALES + 16 * (2 * c + gh) + first + XV * h);
                        FS_UNROLL
                        for (int r = 0; r < R; r++) { /* s_g·m_c ≤ 128·16, times Σ (q − 32)·a ≤ 16·32·127 */
                            xi scale_m = xi_madd16(xi_zero(), scale, xi_set1_32(terms[r * blocks + b].multiples[c]));
                            t[h * R + r] = xi_add32(t[h * R + r], xi_mul32(sum[j][h * R + r], scale_m));
                        }
                    }
                }
            }
        FS_UNROLL
        for (int h = 0; h < H; h++) {
            xf d = xf_load(gb + Q6_K_X16_D + 4 * (first + XV * h));
            FS_UNROLL
            for (int r = 0; r < R; r++) {
                xf da = xf_set1(load_f32(a + r * act_row_bytes));
                acc[h * R + r] = xf_fma(xf_mul(da, d), xf_cvt(t[h * R + r]), acc[h * R + r]);
            }
        }
    }
    FS_UNROLL
    for (int h = 0; h < H; h++)
        FS_UNROLL
        for (int r = 0; r < R; r++) xf_store(out + r * out_stride + XV * h, acc[h * R + r]);
}

FS_K_QUANT_X16_MATMUL(q6_k, Q6_K_X16_BLOCK, q6_k)

/*
 * Per activation row and block, what the Q2_K kernel takes from the Q8_K block: each chunk's multiple twice, as the
 * int16 pair (m_c, m_c) for vpmullw, and each group's m_c·(sum of its quants) (≤ 16·16·127, an int16, in the low
 * half of an int32) for the mins' vpmaddwd.
 */
struct q2_k_terms {
    int32_t multiples[8], min_terms[16];
};

static inline void q2_k_terms_of(const uint8_t *a, struct q2_k_terms *t) {
    for (int c = 0; c < 8; c++) {
        int32_t m = load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
        t->multiples[c] = int16_pair(m, m);
        for (int g = 2 * c; g < 2 * c + 2; g++) t->min_terms[g] = int16_pair(m * load_i16(a + Q8_K_SUMS + 2 * g), 0);
    }
}

/*
 * Likewise for Q2_K (XV rows from row `first` of the group, R activation rows, terms[r·blocks + b] their
 * q2_k_terms). Per half of the block (chunks 4h..4h + 3) and group half (steps 0..3: each chunk's first group,
 * 4..7: its second) a step's 64 bytes give the four chunks' 2-bit weights (shifts and masks), and each chunk's group
 * sum takes four steps of q·a (VNNI: int32; avx2: int16 pairs, ≤ 4·2·3·127); then the sum, an int16 in either form
 * (≤ 16·3·127), times the rows' scale_g·m_c by one vpmaddwd into T, and the rows' min_g times m_c·Σa likewise into M.
 */
FS_ALWAYS_INLINE void q2_k_x16_rows(const uint8_t *gb, int first, const uint8_t *a, int64_t act_row_bytes,
                                    const struct q2_k_terms *terms, int blocks, float *out, int64_t out_stride,
                                    const int R, const int H) {
    const xi two_bits = xi_set1_8(3), low = xi_set1_8(0xF);
    xf acc[FS_ROWS], mins[FS_ROWS]; /* [h·R + r]: H·R ≤ FS_ROWS */
    FS_UNROLL
    for (int v = 0; v < H * R; v++) acc[v] = xf_zero(), mins[v] = xf_zero();
    for (int b = 0; b < blocks; b++, gb += Q2_K_X16_BLOCK, a += Q8_K_BYTES) {
        xi t[FS_ROWS], m[FS_ROWS];
        FS_UNROLL
        for (int v = 0; v < H * R; v++) t[v] = xi_zero(), m[v] = xi_zero();
        FS_UNROLL
        for (int half = 0; half < 2; half++)
            FS_UNROLL
            for (int gh = 0; gh < 2; gh++) {
                xi sum[4][FS_ROWS]; /* [chunk 4·half + j][h·R + r] */
                FS_UNROLL
                for (int j = 0; j < 4; j++)
                    FS_UNROLL
                    for (int v = 0; v < H * R; v++) sum[j][v] = xi_zero();
                FS_UNROLL
                for (int l = 4 * gh; l < 4 * gh + 4; l++)
                    FS_UNROLL
                    for (int h = 0; h < H; h++) {
                        xi w = xi_load(gb + Q2_K_X16_QS + 512 * half + 64 * l + 4 * (first + XV * h));
                        xi q[4] = {xi_and(w, two_bits), xi_and(xi_srli16(w, 2), two_bits),
                                   xi_and(xi_srli16(w, 4), two_bits), xi_and(xi_srli16(w, 6), two_bits)};
                        FS_UNROLL
                        for (int r = 0; r < R; r++) {
                            const uint8_t *x = a + r * act_row_bytes + Q8_K_QS + 128 * half + 4 * l;
                            FS_UNROLL
                            for (int j = 0; j < 4; j++) sum[j][h * R + r] = xi_dot(sum[j][h * R + r], q[j], x + 32 * j);
                        }
                    }
                FS_UNROLL
                for (int j = 0; j < 4; j++) {
                    int c = 4 * half + j, g = 2 * c + gh;
                    FS_UNROLL
                    for (int h = 0; h < H; h++) {
                        xi scale_min = xi_u8to32(gb + Q2_K_X16_SCALES + 16 * g + first + XV * h);
                        xi scale = xi_and(scale_min, low), min = xi_srli32(scale_min, 4);
#ifdef FS_X16_INT16_SUMS
                        scale = xi_or(scale, xi_slli32(scale, 16)); /* (s_g, s_g): the sums are int16 pairs */
#endif
                        FS_UNROLL
                        for (int r = 0; r < R; r++) { /* s_g·m_c ≤ 15·16 (0 in the high half with VNNI) */
                            const struct q2_k_terms *q = terms + r * blocks + b;
                            int v = h * R + r;
                            t[v] = xi_madd16(t[v], sum[j][v], xi_mul16(scale, xi_set1_32(q->multiples[c])));
                            m[v] = xi_madd16(m[v], min, xi_set1_32(q->min_terms[g]));
                        }
                    }
                }
            }
        FS_UNROLL
        for (int h = 0; h < H; h++) {
            xf d = xf_half(gb + Q2_K_X16_D + 2 * (first + XV * h));
            xf dmin = xf_half(gb + Q2_K_X16_DMIN + 2 * (first + XV * h));
            FS_UNROLL
            for (int r = 0; r < R; r++) {
                xf da = xf_set1(load_f32(a + r * act_row_bytes));
                acc[h * R + r] = xf_fma(xf_mul(da, d), xf_cvt(t[h * R + r]), acc[h * R + r]);
                mins[h * R + r] = xf_fma(xf_mul(da, dmin), xf_cvt(m[h * R + r]), mins[h * R + r]);
            }
        }
    }
    FS_UNROLL
    for (int h = 0; h < H; h++)
        FS_UNROLL
        for (int r = 0; r < R; r++) xf_store(out + r * out_stride + XV * h, xf_sub(acc[h * R + r], mins[h * R + r]));
}

FS_K_QUANT_X16_MATMUL(q2_k, Q2_K_X16_BLOCK, q2_k)

/*
 * Per activation row and block, what the Q3_K kernel takes from the Q8_K block: each chunk's multiple twice, as the
 * int16 pair (m_c, m_c) for vpmullw, and each group's −4·(sum of its quants) (≤ 4·16·127), the start of its
 * Σ (u − 4)·a: an int32 for vpdpbusd's sums, the int16 pair (−4·Σa, 0) for avx2's int16 pairs.
 */
struct q3_k_terms {
    int32_t multiples[8], offsets[16];
};

static inline void q3_k_terms_of(const uint8_t *a, struct q3_k_terms *t) {
    for (int c = 0; c < 8; c++) {
        int32_t m = load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
        t->multiples[c] = int16_pair(m, m);
    }
    for (int g = 0; g < 16; g++) {
        int32_t offset = -4 * load_i16(a + Q8_K_SUMS + 2 * g);
#ifdef FS_X16_INT16_SUMS
        offset = int16_pair(offset, 0);
#endif
        t->offsets[g] = offset;
    }
}

/*
 * Likewise for Q3_K (XV rows from row `first` of the group, R activation rows, terms[r·blocks + b] their
 * q3_k_terms). Per half of the block (chunks 4h..4h + 3) and group half (steps 0..3: each chunk's first group,
 * 4..7: its second) a step's qs and hmask give the four chunks' weights as unsigned u = low bits | hmask bit << 2
 * (0..7, the weight plus 4), and each chunk's group sum starts at −4·Σa and takes four steps of u·a (VNNI: int32;
 * avx2: int16 pairs, within ±(4·16·127 + 4·2·7·127)); then the sum, an int16 in either form (|Σ (u − 4)·a| ≤
 * 16·4·127), times the rows' s_g·m_c (|s_g·m_c| ≤ 32·16; the high int16 of each lane 0 with VNNI, s_g·m_c again on
 * avx2) by one vpmaddwd into T.
 */
FS_ALWAYS_INLINE void q3_k_x16_rows(const uint8_t *gb, int first, const uint8_t *a, int64_t act_row_bytes,
                                    const struct q3_k_terms *terms, int blocks, float *out, int64_t out_stride,
                                    const int R, const int H) {
    const xi two_bits = xi_set1_8(3), third_bit = xi_set1_8(4), low_half = xi_set1_32(0xFFFF);
    xf acc[FS_ROWS]; /* [h·R + r]: H·R ≤ FS_ROWS */
    FS_UNROLL
    for (int v = 0; v < H * R; v++) acc[v] = xf_zero();
    for (int b = 0; b < blocks; b++, gb += Q3_K_X16_BLOCK, a += Q8_K_BYTES) {
        xi t[FS_ROWS];
        FS_UNROLL
        for (int v = 0; v < H * R; v++) t[v] = xi_zero();
        FS_UNROLL
        for (int half = 0; half < 2; half++)
            FS_UNROLL
            for (int gh = 0; gh < 2; gh++) {
                xi sum[4][FS_ROWS]; /* [chunk 4·half + j][h·R + r] */
                FS_UNROLL
                for (int j = 0; j < 4; j++)
                    FS_UNROLL
                    for (int v = 0; v < H * R; v++)
                        sum[j][v] = xi_set1_32(terms[v % R * blocks + b].offsets[2 * (4 * half + j) + gh]);
                FS_UNROLL
                for (int l = 4 * gh; l < 4 * gh + 4; l++)
                    FS_UNROLL
                    for (int h = 0; h < H; h++) {
                        int rows = 4 * (first + XV * h);
                        xi w = xi_load(gb + Q3_K_X16_QS + 512 * half + 64 * l + rows);
                        xi hm = xi_load(gb + Q3_K_X16_HMASK + 64 * l + rows);
                        /* Chunk c = 4·half + j's hmask bit c moved to bit 2 of its byte (16-bit shifts, masked per byte). */
                        xi high[4];
                        if (half == 0)
                            high[0] = xi_slli16(hm, 2), high[1] = xi_slli16(hm, 1), high[2] = hm,
                            high[3] = xi_srli16(hm, 1);
                        else
                            high[0] = xi_srli16(hm, 2), high[1] = xi_srli16(hm, 3), high[2] = xi_srli16(hm, 4),
                            high[3] = xi_srli16(hm, 5);
                        xi q[4] = {xi_or(xi_and(w, two_bits), xi_and(high[0], third_bit)),
                                   xi_or(xi_and(xi_srli16(w, 2), two_bits), xi_and(high[1], third_bit)),
                                   xi_or(xi_and(xi_srli16(w, 4), two_bits), xi_and(high[2], third_bit)),
                                   xi_or(xi_and(xi_srli16(w, 6), two_bits), xi_and(high[3], third_bit))};
                        FS_UNROLL
                        for (int r = 0; r < R; r++) {
                            const uint8_t *x = a + r * act_row_bytes + Q8_K_QS + 128 * half + 4 * l;
                            FS_UNROLL
                            for (int j = 0; j < 4; j++) sum[j][h * R + r] = xi_dot(sum[j][h * R + r], q[j], x + 32 * j);
                        }
                    }
                FS_UNROLL
                for (int j = 0; j < 4; j++) {
                    int c = 4 * half + j, g = 2 * c + gh;
                    FS_UNROLL
                    for (int h = 0; h < H; h++) {
                        xi scale = xi_and(xi_s8to32(gb + Q3_K_X16_SCALES + 16 * g + first + XV * h), low_half);
#ifdef FS_X16_INT16_SUMS
                        scale = xi_or(scale, xi_slli32(scale, 16)); /* (s_g, s_g): the sums are int16 pairs */
#endif
                        FS_UNROLL
                        for (int r = 0; r < R; r++) {
                            int v = h * R + r;
                            t[v] = xi_madd16(t[v], sum[j][v], xi_mul16(scale, xi_set1_32(terms[r * blocks + b].multiples[c])));
                        }
                    }
                }
            }
        FS_UNROLL
        for (int h = 0; h < H; h++) {
            xf d = xf_half(gb + Q3_K_X16_D + 2 * (first + XV * h));
            FS_UNROLL
            for (int r = 0; r < R; r++) {
                xf da = xf_set1(load_f32(a + r * act_row_bytes));
                acc[h * R + r] = xf_fma(xf_mul(da, d), xf_cvt(t[h * R + r]), acc[h * R + r]);
            }
        }
    }
    FS_UNROLL
    for (int h = 0; h < H; h++)
        FS_UNROLL
        for (int r = 0; r < R; r++) xf_store(out + r * out_stride + XV * h, acc[h * R + r]);
}

FS_K_QUANT_X16_MATMUL(q3_k, Q3_K_X16_BLOCK, q3_k)
