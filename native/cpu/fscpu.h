/*
 * libfscpu: fs's native CPU matmul kernels, called from Java through the FFM API (fs.backend.cpu.NativeKernels).
 *
 * Each weight row is multiplied by activations that were quantized once per matmul to 8 bits, with integer dot
 * products (llama.cpp's scheme): Q8_0 activation blocks (a float scale, 32 int8 and a step per 4) for Q8_0 and Q4_0 weights, Q8_K
 * blocks (256 int8, a float scale and 16 sums of 16) for the K-quants and IQ2_XXS. Every kernel comes in one variant
 * per instruction set, each named with its suffix (fs_matmul_q4_k_avx2, ...): the caller picks one with
 * fs_cpu_runs, and every variant computes bit for bit the same floats (the order is in README.md, "Arithmetic").
 *
 * All pointers may be unaligned. Counts and k are multiples of the block size of the format involved.
 */
#ifndef FSCPU_H
#define FSCPU_H

#include <stdint.h>

#define FS_API __attribute__((visibility("default")))

/*
 * The best variant this CPU runs: "avx512" (F, BW, VL and VNNI), "avxvnni" (AVX2 with VEX-encoded VNNI), "avx2"
 * (with FMA and F16C), "neon" (aarch64 with the dot product extension) or "scalar".
 */
FS_API const char *fs_cpu_isa(void);

/* 1 if this library has variant isa and this CPU runs it, else 0. */
FS_API int fs_cpu_runs(const char *isa);

/* The bytes of one activation block, "q8_0" (of 32 values) or "q8_k" (of 256), or of one converted value ("bf16",
 * "f16", "f32"); 0 for another name. */
#define FS_Q8_0_BYTES 68
#define FS_Q8_K_BYTES 340
FS_API int fs_activation_bytes(const char *format);

/* The bytes of one weight block of the format named as in fs_matmul_F_V ("q4_k", ...); 0 for another name. */
FS_API int fs_block_bytes(const char *format);

/*
 * fs_quantize_q8_0_V / fs_quantize_q8_k_V: count floats at x (a multiple of 32 / 256) to count / 32 Q8_0 blocks /
 * count / 256 Q8_K blocks at y (their layouts are in blocks.h).
 *
 * fs_matmul_F_V: out[r * out_stride + i] = weight row i · activation row r, for weight rows row_from <= i < row_to
 * (row i at w + i * row_bytes, k weights of format F) and activation rows 0 <= r < act_rows (quantized rows of k
 * values, back to back at act, in the activation format of F).
 */
#define FS_DECLARE_VARIANT(V)                                                                                        \
    FS_DECLARE_FLOAT_OPS(V)                                                                                          \
    FS_API void fs_quantize_q8_0_##V(const float *x, void *y, int64_t count);                                        \
    FS_API void fs_quantize_q8_k_##V(const float *x, void *y, int64_t count);                                        \
    FS_DECLARE_MATMUL(q8_0, V)                                                                                       \
    FS_DECLARE_MATMUL(q4_0, V)                                                                                       \
    FS_DECLARE_MATMUL(q4_k, V)                                                                                       \
    FS_DECLARE_MATMUL(q6_k, V)                                                                                       \
    FS_DECLARE_MATMUL(q5_k, V)                                                                                       \
    FS_DECLARE_MATMUL(q2_k, V)                                                                                       \
    FS_DECLARE_MATMUL(q3_k, V)                                                                                       \
    FS_DECLARE_MATMUL(iq2_xxs, V)

/*
 * The float operations of float_ops.c, bit for bit those of the Java kernels at 16 lanes:
 * fs_rms_norm_V: out row r = x row r / sqrt(mean of its squares + eps) * gamma, for rows rows of width floats;
 * fs_rope_V: one row of heads × head_dim floats rotated (rotate-half) by the angles whose cos and sin are given
 * (head_dim / 2 of each); fs_silu_mul_V: out = silu(gate) * up; fs_add_V: x += y. out may be x (in place).
 * fs_attention_V: one query (head_dim floats) against positions 0..seen-1 of one kv head, keys in blocks of kb
 * positions ([block][dimension][position in block]), values [position][dimension]; softmax of scale · q·k; out =
 * the weighted values; s is scratch of seen rounded up to kb floats. fs_store_key_V: one key row (head_dim floats)
 * into its block, dimension d at dst[d * kb]; fs_argmax_V: the index of the first largest of count floats.
 * fs_attention_chunk_V: a chunk of attention over a cache of typed rows (float_ops.c says what it computes).
 */
#define FS_DECLARE_FLOAT_OPS(V)                                                                                      \
    FS_API void fs_rms_norm_##V(const float *x, const float *gamma, float *out, int rows, int width, float eps);      \
    FS_API void fs_rope_##V(float *x, int heads, int head_dim, const float *cos_, const float *sin_);                \
    FS_API void fs_silu_mul_##V(const float *gate, const float *up, float *out, int64_t count);                      \
    FS_API void fs_add_##V(float *x, const float *y, int64_t count);                                                  \
    FS_API void fs_attention_##V(const float *q, const float *keys, const float *values, int head_dim, int kb,         \
                                 int seen, float scale, float *s, float *out);                                   \
    FS_API void fs_store_key_##V(const float *k, float *dst, int head_dim, int kb);                                   \
    FS_API void fs_attention_chunk_##V(const float *q, int nq, const int *seen, const uint8_t *keys,                  \
                                       const uint8_t *values, int k_type, int v_type, int head_dim, int from, int to, \
                                       float scale, float *s, int s_stride, float *m, float *l, float *o);            \
    FS_API int64_t fs_argmax_##V(const float *x, int64_t count);

#define FS_DECLARE_MATMUL(F, V)                                                                                      \
    FS_API void fs_matmul_##F##_##V(const void *w, int64_t row_bytes, int row_from, int row_to, const void *act,     \
                                    int act_rows, int k, float *out, int64_t out_stride);

FS_DECLARE_VARIANT(scalar)
#if defined(__x86_64__)
FS_DECLARE_VARIANT(avx2)
FS_DECLARE_VARIANT(avx512)
FS_DECLARE_VARIANT(avxvnni)
#endif
#if defined(__aarch64__)
FS_DECLARE_VARIANT(neon)
#endif

/*
 * Repacked Q4_K, Q4_0, Q8_0, Q6_K, Q2_K and Q3_K weights: groups of 16 consecutive weight rows interleaved block by block (layouts in
 * repacked.h), so that one activation value meets 16 rows' weights in one instruction and the block scales are
 * vectors over the rows. The same floats as fs_matmul_F_V on the original rows, bit for bit.
 *
 * fs_repacked_bytes: the bytes of the repacked form of `rows` rows (a multiple of 16) of k weights of format F
 * ("q4_k", "q4_0", "q8_0", "q6_k", "q2_k" or "q3_k"); 0 for other formats, or rows or k that are not whole groups and blocks.
 * fs_repack_F: groups group_from..group_to-1 (16 rows each) of weight w (row i at w + i * row_bytes) into packed,
 * each group at packed + g * fs_repacked_bytes(F, 16, k). Not per ISA: one layout for every variant.
 * fs_matmul_F_x16_V: as fs_matmul_F_V on the repacked weights: out[r * out_stride + i] for row_from <= i < row_to
 * (multiples of 16) and r < act_rows.
 */
FS_API int64_t fs_repacked_bytes(const char *format, int64_t rows, int k);
FS_API void fs_repack_q4_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed);
FS_API void fs_repack_q4_0(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed);
FS_API void fs_repack_q8_0(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed);
FS_API void fs_repack_q6_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed);
FS_API void fs_repack_q2_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed);
FS_API void fs_repack_q3_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed);
#define FS_DECLARE_MATMUL_X16(F, V)                                                                                  \
    FS_API void fs_matmul_##F##_x16_##V(const void *packed, int row_from, int row_to, const void *act, int act_rows, \
                                        int k, float *out, int64_t out_stride);
#define FS_DECLARE_REPACKED_VARIANT(V)                                                                               \
    FS_DECLARE_MATMUL_X16(q4_k, V)                                                                                   \
    FS_DECLARE_MATMUL_X16(q4_0, V) FS_DECLARE_MATMUL_X16(q8_0, V) FS_DECLARE_MATMUL_X16(q6_k, V)                    \
    FS_DECLARE_MATMUL_X16(q2_k, V) FS_DECLARE_MATMUL_X16(q3_k, V)
FS_DECLARE_REPACKED_VARIANT(scalar)
#if defined(__x86_64__)
FS_DECLARE_REPACKED_VARIANT(avx2)
FS_DECLARE_REPACKED_VARIANT(avx512)
FS_DECLARE_REPACKED_VARIANT(avxvnni)
#endif
#if defined(__aarch64__)
FS_DECLARE_REPACKED_VARIANT(neon)
#endif

/*
 * The float matmuls (float_matmul_*.c, README.md "Float matmuls"): BF16, F16 and F32 weights against activations
 * converted once per matmul: fs_convert_bf16_V (ggml's fp32 -> bf16: nearest, ties to even), fs_convert_f16_V
 * (IEEE half, ties to even) and fs_convert_f32_V (a copy), count floats at x to count values at y. The matmuls
 * take them as fs_matmul_F_V above does, the activation rows back to back in their format, k any positive count.
 */
#define FS_DECLARE_FLOAT_MATMULS(V)                                                                                  \
    FS_API void fs_convert_bf16_##V(const float *x, void *y, int64_t count);                                         \
    FS_API void fs_convert_f16_##V(const float *x, void *y, int64_t count);                                          \
    FS_API void fs_convert_f32_##V(const float *x, void *y, int64_t count);                                          \
    FS_DECLARE_MATMUL(bf16, V)                                                                                       \
    FS_DECLARE_MATMUL(f16, V)                                                                                        \
    FS_DECLARE_MATMUL(f32, V)

FS_DECLARE_FLOAT_MATMULS(scalar)
#if defined(__x86_64__)
FS_DECLARE_FLOAT_MATMULS(avx2)
FS_DECLARE_FLOAT_MATMULS(avx512)
FS_DECLARE_FLOAT_MATMULS(avxvnni)
#endif
#if defined(__aarch64__)
FS_DECLARE_FLOAT_MATMULS(neon)
#endif

#endif
