/*
 * fscpu_check: every variant of this build that this CPU runs against the scalar variant, bit for bit: both
 * activation quantizers (the bytes) and every format's matmul (the floats), on random and extreme blocks, six
 * activation rows (tiles of four and a rest), all rows and a slice from an odd row, with an output stride; and the
 * repacked Q4_K, Q4_0, Q8_0, Q6_K, Q2_K and Q3_K kernels of every variant (scalar's too) against scalar's kernel on the rows unpacked, for
 * 1..9 activation rows, all groups and a slice from an odd group.
 * Where the JVM cannot run (a cross build under qemu: tools/native/check-aarch64.sh) it is the check that the
 * Java tests (NativeKernelsTest, against Int8Reference) are elsewhere. Built on demand only:
 *   cmake --build <dir> --target fscpu_check && <dir>/fscpu_check [isa]
 * With isa, fs_cpu_isa must name it (the CPU detection's check). Exit status 1 on any difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"

typedef void (*matmul_fn)(const void *, int64_t, int, int, const void *, int, int, float *, int64_t);
typedef void (*quantize_fn)(const float *, void *, int64_t);
typedef void (*rms_norm_fn)(const float *, const float *, float *, int, int, float);
typedef void (*rope_fn)(float *, int, int, const float *, const float *);
typedef void (*silu_mul_fn)(const float *, const float *, float *, int64_t);
typedef void (*add_fn)(float *, const float *, int64_t);
typedef void (*attention_fn)(const float *, const float *, const float *, int, int, int, float, float *, float *);
typedef void (*store_key_fn)(const float *, float *, int, int);
typedef int64_t (*argmax_fn)(const float *, int64_t);

#define FORMATS 8

struct format {
    const char *name;
    int elements, block_bytes, q8_k, scale_offsets[2]; /* q8_k: the activations are Q8_K; f16 scales, -1: none */
};

static const struct format formats[FORMATS] = {
    {"q8_0", 32, Q8_0_BLOCK, 0, {0, -1}},   {"q4_0", 32, Q4_0_BLOCK, 0, {0, -1}},
    {"q4_k", 256, Q4_K_BLOCK, 1, {0, 2}},   {"q6_k", 256, Q6_K_BLOCK, 1, {208, -1}},
    {"q5_k", 256, Q5_K_BLOCK, 1, {0, 2}},   {"q2_k", 256, Q2_K_BLOCK, 1, {80, 82}},
    {"q3_k", 256, Q3_K_BLOCK, 1, {108, -1}}, {"iq2_xxs", 256, IQ2_XXS_BLOCK, 1, {0, -1}},
};

struct variant {
    const char *name;
    quantize_fn quantize_q8_0, quantize_q8_k;
    matmul_fn matmul[FORMATS]; /* in the order of formats */
    rms_norm_fn rms_norm;
    rope_fn rope;
    silu_mul_fn silu_mul;
    add_fn add;
    attention_fn attention;
    store_key_fn store_key;
    argmax_fn argmax;
};

#define FS_VARIANT_ENTRY(V)                                                                                          \
    {#V,                                                                                                             \
     fs_quantize_q8_0_##V,                                                                                           \
     fs_quantize_q8_k_##V,                                                                                           \
     {fs_matmul_q8_0_##V, fs_matmul_q4_0_##V, fs_matmul_q4_k_##V, fs_matmul_q6_k_##V, fs_matmul_q5_k_##V,            \
      fs_matmul_q2_k_##V, fs_matmul_q3_k_##V, fs_matmul_iq2_xxs_##V},                                                \
     fs_rms_norm_##V, fs_rope_##V, fs_silu_mul_##V, fs_add_##V, fs_attention_##V, fs_store_key_##V, fs_argmax_##V}

static const struct variant variants[] = {
    FS_VARIANT_ENTRY(scalar),
#if defined(__x86_64__)
    FS_VARIANT_ENTRY(avx2),
    FS_VARIANT_ENTRY(avx512),
    FS_VARIANT_ENTRY(avxvnni),
#elif defined(__aarch64__)
    FS_VARIANT_ENTRY(neon),
#endif
};

enum { K = 2048, ACT_ROWS = 9, WEIGHT_ROWS = 67, OUT_STRIDE = WEIGHT_ROWS + 3, REPACKED_ROWS = 64 };

static uint64_t random_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void) { /* xorshift64 */
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    return random_state;
}

/* A uniform float in [-1, 1). */
static float uniform(void) {
    return (float)((int64_t)(next_random() >> 40) - (1 << 23)) / (float)(1 << 23);
}

/*
 * One chunk of 32 activations of kind `kind`: zeros; ties (amax 127, so id = 1 where the chunk's step is the
 * block's, and ±(n + 0.5) rounds to even); uniform values at a scale from 2^-30 to 2^20; a single spike; values
 * far below the block's largest (a small multiple of its step); groups of 4 each half the one before (Q8_0's
 * multiples 16, 8, .., 1); a constant (every quant ±127).
 */
static void activation_chunk(float *x, int kind) {
    float scale = ldexpf(1.0f, (int)(next_random() % 51) - 30);
    for (int j = 0; j < 32; j++) {
        switch (kind) {
        case 0: x[j] = 0.0f; break;
        case 1: x[j] = j == 0 ? -127.0f : (float)((int)(next_random() % 254) - 127) + 0.5f; break;
        case 2: x[j] = scale * uniform(); break;
        case 3: x[j] = j == (int)(next_random() % 32) ? scale : 0.0f; break;
        case 4: x[j] = 0.01f * uniform(); break;
        case 5: x[j] = ldexpf(scale * uniform(), -(j / 4)); break;
        default: x[j] = -0.75f; break;
        }
    }
}

/* Rows mixed chunks, but row 1 all ties and row 4 constant (every quant −127). */
static void activations(float *x) {
    for (int r = 0; r < ACT_ROWS; r++)
        for (int c = 0; c < K / 32; c++) {
            int kind = r == 1 ? 1 : r == 4 ? 6 : (int)(next_random() % 6);
            if (c % 8 == 0 && kind == 4) kind = 2; /* a block's first chunk sets a larger amax for the others */
            activation_chunk(x + (int64_t)r * K + 32 * c, kind);
        }
}

/*
 * Weight rows: 0, 1 and 2 every byte 0x00, 0xFF, 0x80 (each format's extremes: Q6_K's −32 and scale −128 ...), the
 * others random; every f16 scale then a finite half, normal (about 2^-8..2^-6) or, in every seventh block,
 * subnormal, of either sign.
 */
static void weights(const struct format *f, uint8_t *w, int64_t row_bytes) {
    for (int i = 0; i < WEIGHT_ROWS; i++)
        for (int64_t j = 0; j < row_bytes; j++)
            w[i * row_bytes + j] = i == 0 ? 0x00 : i == 1 ? 0xFF : i == 2 ? 0x80 : (uint8_t)next_random();
    for (int64_t b = 0; b < WEIGHT_ROWS * row_bytes / f->block_bytes; b++)
        for (int s = 0; s < 2; s++)
            if (f->scale_offsets[s] >= 0) {
                uint16_t magnitude = b % 7 == 3 ? (uint16_t)(1 + next_random() % 0x3FF)
                                                : (uint16_t)(0x1C00 + next_random() % 0x800);
                uint16_t h = (uint16_t)(magnitude | (next_random() & 1 ? 0x8000 : 0));
                memcpy(w + b * f->block_bytes + f->scale_offsets[s], &h, sizeof h);
            }
}

/* Whether n bytes at a and b are equal; else says where they first differ. */
static int same_bytes(const char *what, const char *variant, const uint8_t *expected, const uint8_t *actual,
                      size_t n) {
    for (size_t i = 0; i < n; i++)
        if (expected[i] != actual[i]) {
            printf("%s %s: byte %zu is 0x%02x, scalar's 0x%02x\n", variant, what, i, actual[i], expected[i]);
            return 0;
        }
    return 1;
}

/* Whether n floats are equal bit for bit; else says where they first differ. */
static int same_floats(const char *what, const char *variant, const float *expected, const float *actual, int n) {
    for (int i = 0; i < n; i++)
        if (memcmp(expected + i, actual + i, sizeof(float)) != 0) {
            printf("%s %s: output %d (row %d, column %d) is %.9g, scalar's %.9g\n", variant, what, i, i / OUT_STRIDE,
                   i % OUT_STRIDE, actual[i], expected[i]);
            return 0;
        }
    return 1;
}

static void fill_sentinel(float *out, int n) {
    for (int i = 0; i < n; i++) out[i] = -1.0f;
}

/*
 * The float operations of v against the scalar variant's on x (ACT_ROWS rows of K, whose values span 2^-30..2^20
 * and include zeros), at widths that leave a tail after the vectors; returns 1 where all agree.
 */
static int check_float_ops(const struct variant *v, const float *x) {
    const struct variant *scalar = &variants[0];
    int n = ACT_ROWS * K, ok = 1;
    float *expected = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    float *gamma = malloc(sizeof(float) * K), *angles = malloc(sizeof(float) * K);
    for (int i = 0; i < K; i++) gamma[i] = 1.0f + 0.1f * uniform();
    for (int i = 0; i < K; i++) angles[i] = uniform();
    /* rmsnorm: rows of 1000 (62 vectors of 16 and a tail of 8) */
    scalar->rms_norm(x, gamma, expected, n / 1000, 1000, 1e-6f);
    v->rms_norm(x, gamma, out, n / 1000, 1000, 1e-6f);
    ok &= same_floats("rms_norm", v->name, expected, out, n / 1000 * 1000);
    /* rope: one row of 6 heads of 84 (42 pairs: two vectors and a tail), in place */
    memcpy(expected, x, sizeof(float) * 6 * 84);
    memcpy(out, x, sizeof(float) * 6 * 84);
    scalar->rope(expected, 6, 84, angles, angles + 42);
    v->rope(out, 6, 84, angles, angles + 42);
    ok &= same_floats("rope", v->name, expected, out, 6 * 84);
    /* silu·mul with gates scaled to span exp's clamp (|g| up to 2^7 and beyond) and an odd count; add in place */
    for (int i = 0; i < K; i++) angles[i] = 200.0f * uniform();
    scalar->silu_mul(angles, x, expected, K - 3);
    v->silu_mul(angles, x, out, K - 3);
    ok &= same_floats("silu_mul", v->name, expected, out, K - 3);
    memcpy(out, expected, sizeof(float) * (K - 3));
    scalar->add(expected, x, K - 3);
    v->add(out, x, K - 3);
    ok &= same_floats("add", v->name, expected, out, K - 3);
    /* attention: head_dim 64 (x as keys, values and queries), 37 positions (a partial last block), 4-16 lanes */
    for (int kb = 4; kb <= 16; kb *= 2) {
        float *s = angles; /* scratch: 48 floats */
        scalar->attention(x + 5 * 64, x, x + K, 64, kb, 37, 0.125f, s, expected);
        v->attention(x + 5 * 64, x, x + K, 64, kb, 37, 0.125f, s, out);
        ok &= same_floats("attention", v->name, expected, out, 64);
    }
    /* store_key: a row of 64 into blocks of 8; argmax: a tie (the first wins) far from the start */
    fill_sentinel(expected, 64 * 8);
    fill_sentinel(out, 64 * 8);
    scalar->store_key(x, expected + 3, 64, 8);
    v->store_key(x, out + 3, 64, 8);
    ok &= same_floats("store_key", v->name, expected, out, 64 * 8);
    memcpy(out, x, sizeof(float) * K);
    out[1500] = out[1700] = 1e30f;
    int64_t at = v->argmax(out, K), scalar_at = scalar->argmax(out, K);
    if (at != 1500 || scalar_at != 1500) {
        printf("%s argmax: %lld, scalar %lld, expected 1500\n", v->name, (long long)at, (long long)scalar_at);
        ok = 0;
    }
    printf("%s float ops %s\n", v->name, ok ? "bit for bit as scalar" : "DIFFER FROM SCALAR");
    free(expected);
    free(out);
    free(gamma);
    free(angles);
    return ok;
}

typedef void (*repacked_matmul_fn)(const void *, int, int, const void *, int, int, float *, int64_t);
typedef void (*repack_fn)(const void *, int64_t, int, int, int, void *);

/* The formats with a repacked layout are the first seven of formats: q8_0, q4_0, q4_k, q6_k, q5_k (none), q2_k, q3_k. */
enum { REPACKED_FORMATS = 7 };

struct repacked {
    const char *variant;
    repacked_matmul_fn matmul[REPACKED_FORMATS]; /* in the order of formats */
};

#define FS_REPACKED_ENTRY(V)                                                                                         \
    {#V,                                                                                                             \
     {fs_matmul_q8_0_x16_##V, fs_matmul_q4_0_x16_##V, fs_matmul_q4_k_x16_##V, fs_matmul_q6_k_x16_##V, NULL,         \
      fs_matmul_q2_k_x16_##V, fs_matmul_q3_k_x16_##V}}

static const struct repacked repacked_variants[] = {
    FS_REPACKED_ENTRY(scalar),
#if defined(__x86_64__)
    FS_REPACKED_ENTRY(avx2),
    FS_REPACKED_ENTRY(avx512),
    FS_REPACKED_ENTRY(avxvnni),
#elif defined(__aarch64__)
    FS_REPACKED_ENTRY(neon),
#endif
};

/*
 * Format fi (q8_0, q4_0, q4_k, q6_k, q2_k or q3_k) repacked, in two calls (group 0, then groups 1..), and multiplied by every variant's x16
 * kernel this CPU runs against 1..ACT_ROWS activation rows, all groups and groups 1.. (an odd first group), against
 * the scalar kernel on the unpacked rows; returns 1 where all agree.
 */
static int check_repacked(int fi, const char *format, repack_fn repack, const uint8_t *act) {
    const struct format *f = &formats[fi];
    int64_t row_bytes = (int64_t)K / f->elements * f->block_bytes;
    int64_t packed_bytes = fs_repacked_bytes(format, REPACKED_ROWS, K), group_bytes = fs_repacked_bytes(format, 16, K);
    if (packed_bytes != REPACKED_ROWS / 16 * group_bytes || fs_repacked_bytes(format, 8, K) != 0) {
        printf("fs_repacked_bytes %s: %lld for %d rows\n", format, (long long)packed_bytes, REPACKED_ROWS);
        return 0;
    }
    uint8_t *w = malloc((size_t)(WEIGHT_ROWS * row_bytes)), *packed = malloc((size_t)packed_bytes);
    weights(f, w, row_bytes);
    repack(w, row_bytes, 0, 1, K, packed);
    repack(w, row_bytes, 1, REPACKED_ROWS / 16, K, packed);
    int n = ACT_ROWS * OUT_STRIDE, ok = 1;
    float *expected = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    for (size_t v = 0; v < sizeof repacked_variants / sizeof *repacked_variants; v++) {
        const struct repacked *variant = &repacked_variants[v];
        if (!fs_cpu_runs(variant->variant)) continue;
        repacked_matmul_fn matmul = variant->matmul[fi];
        int same = 1;
        for (int rows = 1; rows <= ACT_ROWS && same; rows++)
            for (int from = 0; from <= 16 && same; from += 16) {
                fill_sentinel(expected, n);
                variants[0].matmul[fi](w, row_bytes, from, REPACKED_ROWS, act, rows, K, expected, OUT_STRIDE);
                fill_sentinel(out, n);
                matmul(packed, from, REPACKED_ROWS, act, rows, K, out, OUT_STRIDE);
                char what[64];
                snprintf(what, sizeof what, "x16 %s, %d rows from %d", format, rows, from);
                same = same_floats(what, variant->variant, expected, out, n);
            }
        printf("%s %s x16 %s\n", variant->variant, format, same ? "bit for bit as scalar unpacked" : "DIFFERS");
        ok &= same;
    }
    free(w);
    free(packed);
    free(expected);
    free(out);
    return ok;
}

/* The float matmuls' functions of one variant (fscpu.h, FS_DECLARE_FLOAT_MATMULS). */
struct float_variant {
    quantize_fn convert_bf16, convert_f16, convert_f32;
    matmul_fn bf16, f16, f32;
};

#define FS_FLOAT_ENTRY(V)                                                                                            \
    {fs_convert_bf16_##V, fs_convert_f16_##V, fs_convert_f32_##V, fs_matmul_bf16_##V, fs_matmul_f16_##V,             \
     fs_matmul_f32_##V}

/* In the order of variants. */
static const struct float_variant float_variants[] = {
    FS_FLOAT_ENTRY(scalar),
#if defined(__x86_64__)
    FS_FLOAT_ENTRY(avx2),
    FS_FLOAT_ENTRY(avx512),
    FS_FLOAT_ENTRY(avxvnni),
#elif defined(__aarch64__)
    FS_FLOAT_ENTRY(neon),
#endif
};

/* Bit for bit, except that any NaN equals any NaN (payloads are not part of the contract). */
static int same_or_nan(const char *what, const char *variant, const float *expected, const float *actual, int n) {
    for (int i = 0; i < n; i++) {
        if (expected[i] != expected[i] && actual[i] != actual[i]) continue;
        if (memcmp(expected + i, actual + i, sizeof(float)) != 0) {
            printf("%s %s: output %d is %a, scalar's %a\n", variant, what, i, actual[i], expected[i]);
            return 0;
        }
    }
    return 1;
}

/*
 * A bf16 of weight or activation row `row` in the regime row % 4 picks: ordinary values; values near 2^-63, whose
 * products and sums cross 2^-126 (flush to zero); any bits but NaN's (denormals, infinities, huge products); both.
 */
static uint16_t edge_bf16(int row) {
    uint16_t bits = (uint16_t)next_random();
    int exponent;
    switch (row % 4) {
    case 0: exponent = 112 + (int)(next_random() % 24); break;
    case 1: exponent = 56 + (int)(next_random() % 16); break;
    case 2: exponent = (int)(next_random() % 255); break;
    default: exponent = next_random() % 2 ? 56 + (int)(next_random() % 16) : (int)(next_random() % 8); break;
    }
    return (uint16_t)((bits & 0x807F) | exponent << 7);
}

/*
 * The float matmuls of variant vi against the scalar variant: the activation conversions (bytes) on ordinary and
 * extreme floats; BF16 on random and edge bf16 (raw activation rows), F16 and F32 on random rows, at k = 2048 and
 * an odd k, 6 to 9 activation rows, with a slice from row 1.
 */
static int check_float_matmuls(size_t vi, const float *x) {
    const struct float_variant *scalar = &float_variants[0], *v = &float_variants[vi];
    const char *name = variants[vi].name;
    int ok = 1;
    enum { N = ACT_ROWS * K };
    float *edge = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        uint32_t u = (uint32_t)next_random();
        float f;
        memcpy(&f, &u, sizeof f);
        edge[i] = i % 3 == 0 ? x[i] : f != f ? 0.0f : f; /* NaN payloads are not compared */
    }
    edge[0] = 0x1.00fffep-126f, edge[1] = 0x1.018p0f, edge[2] = 65520.0f, edge[3] = 0x1p-25f, edge[4] = 3e38f;
    uint8_t *expected_bytes = malloc(2 * N), *actual_bytes = malloc(2 * N);
    for (int f = 0; f < 2; f++) {
        quantize_fn want = f == 0 ? scalar->convert_bf16 : scalar->convert_f16;
        quantize_fn got = f == 0 ? v->convert_bf16 : v->convert_f16;
        for (int pass = 0; pass < 2; pass++) {
            want(pass == 0 ? x : edge, expected_bytes, N - 3);
            got(pass == 0 ? x : edge, actual_bytes, N - 3);
            ok &= same_bytes(f == 0 ? "convert bf16" : "convert f16", name, expected_bytes, actual_bytes, 2 * (N - 3));
        }
    }

    const int ks[2] = {K, 1037};
    float *expected = malloc(sizeof(float) * ACT_ROWS * OUT_STRIDE);
    float *out = malloc(sizeof(float) * ACT_ROWS * OUT_STRIDE);
    uint8_t *w = malloc((size_t)WEIGHT_ROWS * K * 4), *act = malloc((size_t)ACT_ROWS * K * 4);
    for (int ki = 0; ki < 2; ki++) {
        int k = ks[ki];
        for (int format = 0; format < 3; format++) {
            int size = format == 2 ? 4 : 2;
            if (format == 0) { /* bf16, raw: the edge regimes */
                for (int i = 0; i < WEIGHT_ROWS * k; i++) {
                    uint16_t h = edge_bf16(i / k);
                    memcpy(w + 2 * i, &h, 2);
                }
                for (int i = 0; i < ACT_ROWS * k; i++) {
                    uint16_t h = edge_bf16(i / k + 1);
                    memcpy(act + 2 * i, &h, 2);
                }
            } else {
                for (int i = 0; i < WEIGHT_ROWS * k; i++) {
                    float f = x[(i * 7) % N] * (1.0f + (float)(i % 13));
                    if (format == 1) {
                        uint16_t h = float_to_half(f);
                        memcpy(w + 2 * i, &h, 2);
                    } else {
                        memcpy(w + 4 * i, &f, 4);
                    }
                }
                (format == 1 ? scalar->convert_f16 : scalar->convert_f32)(x, act, (int64_t)ACT_ROWS * k);
            }
            matmul_fn want = format == 0 ? scalar->bf16 : format == 1 ? scalar->f16 : scalar->f32;
            matmul_fn got = format == 0 ? v->bf16 : format == 1 ? v->f16 : v->f32;
            int64_t row_bytes = (int64_t)k * size;
            int n = ACT_ROWS * OUT_STRIDE, same = 1;
            /*
             * 9 down to 6 activation rows: a kernel's tiles of four, and the rest of one to three; then one (decode,
             * whose tiles of 8, 4 and 1 weight rows the slices from rows 1 and 5 reach: 67 − 5 = 7·8 + 4 + 2)
             */
            static const int act_rows[5] = {ACT_ROWS, ACT_ROWS - 1, ACT_ROWS - 2, ACT_ROWS - 3, 1};
            for (int a = 0; a < 5; a++) {
                int rows = act_rows[a];
                fill_sentinel(expected, n);
                want(w, row_bytes, 0, WEIGHT_ROWS, act, rows, k, expected, OUT_STRIDE);
                fill_sentinel(out, n);
                got(w, row_bytes, 0, WEIGHT_ROWS, act, rows, k, out, OUT_STRIDE);
                char what[64];
                const char *type = format == 0 ? "bf16" : format == 1 ? "f16" : "f32";
                snprintf(what, sizeof what, "matmul %s, k = %d, %d rows", type, k, rows);
                same = same && same_or_nan(what, name, expected, out, n);
                static const int froms[2] = {1, 5};
                for (int s = 0; s < 2; s++) {
                    for (int r = 0; r < rows; r++) {
                        for (int i = 0; i < froms[s]; i++) expected[r * OUT_STRIDE + i] = -1.0f;
                    }
                    fill_sentinel(out, n);
                    got(w, row_bytes, froms[s], WEIGHT_ROWS, act, rows, k, out, OUT_STRIDE);
                    same = same && same_or_nan(what, name, expected, out, n);
                }
            }
            printf("%s %-7s k = %4d %s\n", name, format == 0 ? "bf16" : format == 1 ? "f16" : "f32", k,
                   same ? "bit for bit as scalar" : "DIFFERS FROM SCALAR");
            ok &= same;
        }
    }
    free(edge);
    free(expected_bytes);
    free(actual_bytes);
    free(expected);
    free(out);
    free(w);
    free(act);
    return ok;
}

/* One bf16 for check_bf16_lanes: near 2^-63 (products near 2^-126), a denormal, huge, or ordinary. */
static uint16_t lane_bf16(void) {
    uint16_t bits = (uint16_t)next_random();
    int exponent;
    switch (next_random() % 8) {
    case 0: exponent = 0; break;
    case 1: exponent = 190 + (int)(next_random() % 65); break;
    case 2: exponent = 100 + (int)(next_random() % 40); break;
    default: exponent = 56 + (int)(next_random() % 16); break;
    }
    return (uint16_t)((bits & 0x807F) | exponent << 7);
}

/*
 * BF16 lane by lane: rows of k = 130 that are zero but at 0, 1 (lane 0 of chunk 0) and 128, 129 (lane 0 of chunk 4),
 * so every output is one lane's four steps, nothing absorbed by other lanes: the rounding of each
 * step, DAZ and FTZ (with the sum that rounds to 2^-126 from just under it) show in the output. 2^20 lanes.
 */
static int check_bf16_lanes(size_t vi) {
    enum { LANE_K = 130, ROWS = 4096, PASSES = 43 };
    const struct float_variant *scalar = &float_variants[0], *v = &float_variants[vi];
    uint16_t *w = calloc((size_t)ROWS * LANE_K, 2), *act = calloc((size_t)ACT_ROWS * LANE_K, 2);
    float *expected = malloc(sizeof(float) * ACT_ROWS * ROWS), *out = malloc(sizeof(float) * ACT_ROWS * ROWS);
    static const int at[4] = {0, 1, 128, 129};
    int ok = 1;
    for (int pass = 0; pass < PASSES && ok; pass++) {
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < 4; j++) w[i * LANE_K + at[j]] = lane_bf16();
        }
        for (int r = 0; r < ACT_ROWS; r++) {
            for (int j = 0; j < 4; j++) act[r * LANE_K + at[j]] = lane_bf16();
        }
        if (pass == 0) { /* 2^-63·2^-63 then −2^-75·2^-75: exactly 2^-126 − 2^-150, flushed to zero */
            w[0] = 0x9A00, w[1] = 0x2000, act[0] = 0x1A00, act[1] = 0x2000;
            w[128] = w[129] = act[128] = act[129] = 0;
        }
        scalar->bf16(w, 2 * LANE_K, 0, ROWS, act, ACT_ROWS, LANE_K, expected, ROWS);
        v->bf16(w, 2 * LANE_K, 0, ROWS, act, ACT_ROWS, LANE_K, out, ROWS);
        ok &= same_or_nan("bf16 lanes", variants[vi].name, expected, out, ACT_ROWS * ROWS);
        v->bf16(w, 2 * LANE_K, 0, ROWS, act, 1, LANE_K, out, ROWS); /* decode's kernel: the first row alone */
        ok &= same_or_nan("bf16 lanes, 1 row", variants[vi].name, expected, out, ROWS);
        if (pass == 0 && (expected[0] != 0.0f || out[0] != 0.0f)) {
            printf("%s bf16 lanes: 2^-126 − 2^-150 gives %a, scalar %a, not 0 (FTZ after rounding)\n",
                   variants[vi].name, out[0], expected[0]);
            ok = 0;
        }
    }
    printf("%s bf16 lanes %s\n", variants[vi].name, ok ? "bit for bit as scalar" : "DIFFER FROM SCALAR");
    free(w);
    free(act);
    free(expected);
    free(out);
    return ok;
}

/* Variant v against the scalar variant, every check; returns 1 where all agree. */
static int check(const struct variant *v, const float *x) {
    const struct variant *scalar = &variants[0];
    int ok = 1;
    size_t q8_0_bytes = (size_t)ACT_ROWS * K / 32 * Q8_0_BYTES, q8_k_bytes = (size_t)ACT_ROWS * K / 256 * Q8_K_BYTES;
    uint8_t *act[2] = {malloc(q8_0_bytes), malloc(q8_k_bytes)};
    uint8_t *actual = malloc(q8_0_bytes > q8_k_bytes ? q8_0_bytes : q8_k_bytes);
    scalar->quantize_q8_0(x, act[0], (int64_t)ACT_ROWS * K);
    scalar->quantize_q8_k(x, act[1], (int64_t)ACT_ROWS * K);
    v->quantize_q8_0(x, actual, (int64_t)ACT_ROWS * K);
    ok &= same_bytes("quantize q8_0", v->name, act[0], actual, q8_0_bytes);
    v->quantize_q8_k(x, actual, (int64_t)ACT_ROWS * K);
    ok &= same_bytes("quantize q8_k", v->name, act[1], actual, q8_k_bytes);

    int n = ACT_ROWS * OUT_STRIDE;
    float *expected = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    for (int fi = 0; fi < FORMATS; fi++) {
        const struct format *f = &formats[fi];
        int64_t row_bytes = (int64_t)K / f->elements * f->block_bytes;
        uint8_t *w = malloc((size_t)(WEIGHT_ROWS * row_bytes));
        weights(f, w, row_bytes);
        const uint8_t *a = act[f->q8_k];
        fill_sentinel(expected, n);
        scalar->matmul[fi](w, row_bytes, 0, WEIGHT_ROWS, a, ACT_ROWS, K, expected, OUT_STRIDE);
        fill_sentinel(out, n);
        v->matmul[fi](w, row_bytes, 0, WEIGHT_ROWS, a, ACT_ROWS, K, out, OUT_STRIDE);
        char what[64];
        snprintf(what, sizeof what, "matmul %s", f->name);
        int same = same_floats(what, v->name, expected, out, n);
        /* A slice from odd row 1: the same outputs there, column 0 untouched. */
        for (int r = 0; r < ACT_ROWS; r++) expected[r * OUT_STRIDE] = -1.0f;
        fill_sentinel(out, n);
        v->matmul[fi](w, row_bytes, 1, WEIGHT_ROWS, a, ACT_ROWS, K, out, OUT_STRIDE);
        snprintf(what, sizeof what, "matmul %s, rows 1..%d", f->name, WEIGHT_ROWS);
        same = same && same_floats(what, v->name, expected, out, n);
        printf("%s %-7s %s\n", v->name, f->name, same ? "bit for bit as scalar" : "DIFFERS FROM SCALAR");
        ok &= same;
        free(w);
    }
    free(act[0]);
    free(act[1]);
    free(actual);
    free(expected);
    free(out);
    return ok & check_float_ops(v, x);
}

int main(int argc, char **argv) {
    const char *best = fs_cpu_isa();
    printf("fs_cpu_isa: %s\n", best);
    if (argc > 1 && strcmp(argv[1], best) != 0) {
        printf("expected fs_cpu_isa %s\n", argv[1]);
        return 1;
    }
    float *x = malloc(sizeof(float) * ACT_ROWS * K);
    activations(x);
    int ok = 1, checked = 0;
    uint8_t *q8_0 = malloc((size_t)ACT_ROWS * K / 32 * Q8_0_BYTES), *q8_k = malloc((size_t)ACT_ROWS * K / 256 * Q8_K_BYTES);
    fs_quantize_q8_0_scalar(x, q8_0, (int64_t)ACT_ROWS * K);
    fs_quantize_q8_k_scalar(x, q8_k, (int64_t)ACT_ROWS * K);
    ok &= check_repacked(2, "q4_k", fs_repack_q4_k, q8_k);
    ok &= check_repacked(1, "q4_0", fs_repack_q4_0, q8_0);
    ok &= check_repacked(0, "q8_0", fs_repack_q8_0, q8_0);
    ok &= check_repacked(3, "q6_k", fs_repack_q6_k, q8_k);
    ok &= check_repacked(5, "q2_k", fs_repack_q2_k, q8_k);
    ok &= check_repacked(6, "q3_k", fs_repack_q3_k, q8_k);
    free(q8_0);
    free(q8_k);
    for (size_t i = 1; i < sizeof variants / sizeof *variants; i++) {
        if (!fs_cpu_runs(variants[i].name)) {
            printf("%s: not run by this CPU\n", variants[i].name);
            continue;
        }
        ok &= check(&variants[i], x);
        ok &= check_float_matmuls(i, x);
        ok &= check_bf16_lanes(i);
        checked++;
    }
    free(x);
    if (ok) printf("%d variant(s) bit for bit as scalar\n", checked);
    else printf("differences from scalar\n");
    return ok ? 0 : 1;
}
