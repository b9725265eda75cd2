/*
 * The repacked layouts of Q4_K, Q4_0, Q8_0, Q6_K, Q2_K and Q3_K weights (fscpu.h: fs_repack_F, fs_matmul_F_x16_V) and their matmul in
 * portable C, which the scalar variant runs and which specifies the others.
 *
 * A group of 16 consecutive weight rows is stored block by block: group-block b holds block b of each of the 16
 * rows, its fields each interleaved across the rows so that a vector load gives 16 rows' values in row order.
 *
 * Q4_K group-block (2432 bytes; a row's 144-byte block becomes 152):
 *   @0    d[16]      f32, row r's f16 d (exact)
 *   @64   dmin[16]   f32
 *   @128  scales[8][16] u8: group (chunk) c's 6-bit scale of row r at 16c + r (unpacked from the 12 bytes)
 *   @256  mins[8][16]   u8, likewise
 *   @384  nibbles: for each chunk pair p (0..3: chunks 2p, 2p + 1) and each 4-byte step l (0..7) 64 bytes, row r's
 *         at 4r..4r + 3: its bytes qs[32p + 4l .. 32p + 4l + 3], whose low nibbles are chunk 2p's weights
 *         4l..4l + 3 and high nibbles chunk 2p + 1's (Q4_K's own pairing); pair p, step l at 384 + 512p + 64l.
 * Q4_0 group-block (288 bytes; 18 per row, as unpacked):
 *   @0    d[16]      f16
 *   @32   nibbles: for each 4-byte step l (0..3) 64 bytes, row r's at 4r..4r + 3: its qs[4l .. 4l + 3] (low nibbles
 *         weights 4l..4l + 3, high nibbles 16 + 4l..16 + 4l + 3); step l at 32 + 64l.
 * Q8_0 group-block (544 bytes; 34 per row, as unpacked):
 *   @0    d[16]      f16
 *   @32   quants: for each 4-byte step l (0..7) 64 bytes, row r's at 4r..4r + 3: its qs[4l .. 4l + 3] (weights
 *         4l..4l + 3: one group of the Q8_0 activations' multiples); step l at 32 + 64l.
 * Q6_K group-block (3392 bytes; a row's 210-byte block becomes 212):
 *   @0    d[16]      f32, row r's f16 d (exact)
 *   @64   scales[16][16] i8: group (of 16 weights) g's scale of row r at 16g + r
 *   @320  weights: for each half h (0..1: chunks 4h..4h + 3, as Q6_K's own ql/qh halves) and each 4-byte step l
 *         (0..7) three 64-byte vectors, row r's at 4r..4r + 3 of each: its ql[64h + 4l ..] (low nibbles chunk 4h's
 *         weights 4l..4l + 3, high nibbles chunk 4h + 2's), its ql[64h + 32 + 4l ..] (chunks 4h + 1, 4h + 3) and its
 *         qh[32h + 4l ..] (bits 2j..2j + 1: the top two bits of chunk 4h + j's); half h, step l at 320 + 1536h + 192l.
 *         Steps 0..3 are the first group of each chunk (2c), steps 4..7 the second (2c + 1).
 * Q2_K group-block (1344 bytes; 84 per row, as unpacked):
 *   @0    d[16]      f16
 *   @32   dmin[16]   f16
 *   @64   scales[16][16] u8: group (of 16 weights) g's byte of row r at 16g + r, as the row's own (scale in the low
 *         nibble, min in the high one)
 *   @320  weights: for each half h (0..1: chunks 4h..4h + 3) and each 4-byte step l (0..7) 64 bytes, row r's at
 *         4r..4r + 3: its qs[32h + 4l ..] (bits 2j..2j + 1: chunk 4h + j's weights 4l..4l + 3); half h, step l at
 *         320 + 512h + 64l. Steps 0..3 are the first group of each chunk (2c), steps 4..7 the second (2c + 1).
 * Q3_K group-block (1824 bytes; a row's 110-byte block becomes 114):
 *   @0    d[16]      f16
 *   @32   scales[16][16] s8: group g's signed scale (−32..31, unpacked from the 12 bytes) of row r at 16g + r
 *   @288  hmask: for each 4-byte step l (0..7) 64 bytes, row r's at 4r..4r + 3: its hmask[4l ..] (bit c: chunk c's
 *         weights 4l..4l + 3, both halves); step l at 288 + 64l
 *   @800  qs: for each half h and step l 64 bytes, row r's at 4r: its qs[32h + 4l ..] (bits 2j..2j + 1: chunk
 *         4h + j's two low bits), as Q2_K's; half h, step l at 800 + 512h + 64l. Steps 0..3 are each chunk's first
 *         group, 4..7 its second.
 * A group of k weights is k / 256 (k / 32) group-blocks back to back; group g at g times that.
 */
#ifndef FSCPU_REPACKED_H
#define FSCPU_REPACKED_H

#include "blocks.h"

#define X16_ROWS 16
#define Q4_K_X16_D 0
#define Q4_K_X16_DMIN 64
#define Q4_K_X16_SCALES 128
#define Q4_K_X16_MINS 256
#define Q4_K_X16_QS 384
#define Q4_K_X16_BLOCK 2432
#define Q4_0_X16_D 0
#define Q4_0_X16_QS 32
#define Q4_0_X16_BLOCK 288
#define Q8_0_X16_D 0
#define Q8_0_X16_QS 32
#define Q8_0_X16_BLOCK 544
#define Q6_K_X16_D 0
#define Q6_K_X16_SCALES 64
#define Q6_K_X16_QS 320
#define Q6_K_X16_BLOCK 3392
#define Q2_K_X16_D 0
#define Q2_K_X16_DMIN 32
#define Q2_K_X16_SCALES 64
#define Q2_K_X16_QS 320
#define Q2_K_X16_BLOCK 1344
#define Q3_K_X16_D 0
#define Q3_K_X16_SCALES 32
#define Q3_K_X16_HMASK 288
#define Q3_K_X16_QS 800
#define Q3_K_X16_BLOCK 1824

/*
 * The rows' outputs of one activation row r against group-blocks from gb on, as dot_q4_k computes them: per block
 * T = Σ_c s_c·m_c·(Σ q·a over chunk c) and M = Σ_c min_c·m_c·(sum of chunk c's activations), then
 * acc = fmaf(d_a·d, T, acc), mins = fmaf(d_a·dmin, M, mins); out = acc − mins.
 */
static inline void q4_k_x16_portable(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    float acc[X16_ROWS] = {0}, mins[X16_ROWS] = {0};
    for (int b = 0; b < blocks; b++, gb += Q4_K_X16_BLOCK, a += Q8_K_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_K_QS);
        float da = load_f32(a);
        for (int r = 0; r < X16_ROWS; r++) {
            int32_t t = 0, min_sum = 0;
            for (int c = 0; c < 8; c++) {
                int32_t m = load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c), products = 0;
                for (int j = 0; j < 32; j++) {
                    uint8_t packed = gb[Q4_K_X16_QS + 512 * (c / 2) + 64 * (j / 4) + 4 * r + j % 4];
                    products += ((packed >> 4 * (c % 2)) & 0xF) * x[32 * c + j];
                }
                t += gb[Q4_K_X16_SCALES + 16 * c + r] * m * products;
                min_sum += gb[Q4_K_X16_MINS + 16 * c + r] * m
                           * (load_i16(a + Q8_K_SUMS + 4 * c) + load_i16(a + Q8_K_SUMS + 4 * c + 2));
            }
            acc[r] = fmaf(da * load_f32(gb + Q4_K_X16_D + 4 * r), (float)t, acc[r]);
            mins[r] = fmaf(da * load_f32(gb + Q4_K_X16_DMIN + 4 * r), (float)min_sum, mins[r]);
        }
    }
    for (int r = 0; r < X16_ROWS; r++) out[r] = acc[r] - mins[r];
}

/* Likewise for Q4_0, as dot_q4_0: per block T = Σ_g m_g·Σ (q − 8)·a over group g, acc = fmaf(d_w·d_a, T, acc). */
static inline void q4_0_x16_portable(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    float acc[X16_ROWS] = {0};
    for (int b = 0; b < blocks; b++, gb += Q4_0_X16_BLOCK, a += Q8_0_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_0_QS);
        float da = load_f32(a);
        for (int r = 0; r < X16_ROWS; r++) {
            int32_t t = 0;
            for (int j = 0; j < 16; j++) {
                uint8_t packed = gb[Q4_0_X16_QS + 64 * (j / 4) + 4 * r + j % 4];
                t += q8_0_multiple(a, j / 4) * ((packed & 0xF) - 8) * x[j]
                     + q8_0_multiple(a, 4 + j / 4) * ((packed >> 4) - 8) * x[j + 16];
            }
            acc[r] = fmaf(half_to_float(load_u16(gb + Q4_0_X16_D + 2 * r)) * da, (float)t, acc[r]);
        }
    }
    for (int r = 0; r < X16_ROWS; r++) out[r] = acc[r];
}

/* Likewise for Q8_0, as dot_q8_0: per block T = Σ_g m_g·Σ q·a over group g, acc = fmaf(d_w·d_a, T, acc). */
static inline void q8_0_x16_portable(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    float acc[X16_ROWS] = {0};
    for (int b = 0; b < blocks; b++, gb += Q8_0_X16_BLOCK, a += Q8_0_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_0_QS);
        float da = load_f32(a);
        for (int r = 0; r < X16_ROWS; r++) {
            int32_t t = 0;
            for (int j = 0; j < 32; j++)
                t += q8_0_multiple(a, j / 4) * (int8_t)gb[Q8_0_X16_QS + 64 * (j / 4) + 4 * r + j % 4] * x[j];
            acc[r] = fmaf(half_to_float(load_u16(gb + Q8_0_X16_D + 2 * r)) * da, (float)t, acc[r]);
        }
    }
    for (int r = 0; r < X16_ROWS; r++) out[r] = acc[r];
}

/* Row r's 6-bit weight j of chunk c (q, before its − 32) in the Q6_K group-block gb. */
static inline int q6_k_x16_weight(const uint8_t *gb, int r, int c, int j) {
    const uint8_t *step = gb + Q6_K_X16_QS + 1536 * (c / 4) + 192 * (j / 4) + 4 * r + j % 4;
    int low = (step[64 * (c % 2)] >> 4 * (c % 4 / 2)) & 0xF, high = (step[128] >> 2 * (c % 4)) & 3;
    return low | high << 4;
}

/* Likewise for Q6_K, as dot_q6_k: per block T = Σ_g s_g·m_g·Σ (q − 32)·a over group g, acc = fmaf(d_a·d, T, acc). */
static inline void q6_k_x16_portable(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    float acc[X16_ROWS] = {0};
    for (int b = 0; b < blocks; b++, gb += Q6_K_X16_BLOCK, a += Q8_K_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_K_QS);
        float da = load_f32(a);
        for (int r = 0; r < X16_ROWS; r++) {
            int32_t t = 0;
            for (int g = 0; g < 16; g++) {
                int32_t products = 0;
                for (int j = 16 * (g % 2); j < 16 * (g % 2) + 16; j++)
                    products += (q6_k_x16_weight(gb, r, g / 2, j) - 32) * x[32 * (g / 2) + j];
                t += (int8_t)gb[Q6_K_X16_SCALES + 16 * g + r] * load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * (g / 2))
                     * products;
            }
            acc[r] = fmaf(da * load_f32(gb + Q6_K_X16_D + 4 * r), (float)t, acc[r]);
        }
    }
    for (int r = 0; r < X16_ROWS; r++) out[r] = acc[r];
}

/*
 * Likewise for Q2_K, as dot_q2_k: per block T = Σ_g scale_g·m_g·Σ q·a over group g and M = Σ_g min_g·m_g·(sum of
 * group g's activations), acc = fmaf(d_a·d, T, acc), mins = fmaf(d_a·dmin, M, mins); out = acc − mins.
 */
static inline void q2_k_x16_portable(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    float acc[X16_ROWS] = {0}, mins[X16_ROWS] = {0};
    for (int b = 0; b < blocks; b++, gb += Q2_K_X16_BLOCK, a += Q8_K_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_K_QS);
        float da = load_f32(a);
        for (int r = 0; r < X16_ROWS; r++) {
            int32_t t = 0, min_sum = 0;
            for (int g = 0; g < 16; g++) {
                int c = g / 2, products = 0;
                int32_t m = load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c);
                for (int j = 16 * (g % 2); j < 16 * (g % 2) + 16; j++) {
                    uint8_t packed = gb[Q2_K_X16_QS + 512 * (c / 4) + 64 * (j / 4) + 4 * r + j % 4];
                    products += ((packed >> 2 * (c % 4)) & 3) * x[32 * c + j];
                }
                uint8_t scale_min = gb[Q2_K_X16_SCALES + 16 * g + r];
                t += (scale_min & 0xF) * m * products;
                min_sum += (scale_min >> 4) * m * load_i16(a + Q8_K_SUMS + 2 * g);
            }
            acc[r] = fmaf(da * half_to_float(load_u16(gb + Q2_K_X16_D + 2 * r)), (float)t, acc[r]);
            mins[r] = fmaf(da * half_to_float(load_u16(gb + Q2_K_X16_DMIN + 2 * r)), (float)min_sum, mins[r]);
        }
    }
    for (int r = 0; r < X16_ROWS; r++) out[r] = acc[r] - mins[r];
}

/*
 * Likewise for Q3_K, as dot_q3_k: per block T = Σ_g scale_g·m_g·Σ q·a over group g (q the two low bits, minus 4
 * where the hmask bit is clear), acc = fmaf(d_a·d, T, acc).
 */
static inline void q3_k_x16_portable(const uint8_t *gb, const uint8_t *a, int blocks, float *out) {
    float acc[X16_ROWS] = {0};
    for (int b = 0; b < blocks; b++, gb += Q3_K_X16_BLOCK, a += Q8_K_BYTES) {
        const int8_t *x = (const int8_t *)(a + Q8_K_QS);
        float da = load_f32(a);
        for (int r = 0; r < X16_ROWS; r++) {
            int32_t t = 0;
            for (int g = 0; g < 16; g++) {
                int c = g / 2, products = 0;
                for (int j = 16 * (g % 2); j < 16 * (g % 2) + 16; j++) {
                    int step = 64 * (j / 4) + 4 * r + j % 4;
                    int low = (gb[Q3_K_X16_QS + 512 * (c / 4) + step] >> 2 * (c % 4)) & 3;
                    int high = (gb[Q3_K_X16_HMASK + step] >> c) & 1;
                    products += (high ? low : low - 4) * x[32 * c + j];
                }
                t += (int8_t)gb[Q3_K_X16_SCALES + 16 * g + r] * load_i16(a + Q8_K_CHUNK_MULTIPLES + 2 * c) * products;
            }
            acc[r] = fmaf(da * half_to_float(load_u16(gb + Q3_K_X16_D + 2 * r)), (float)t, acc[r]);
        }
    }
    for (int r = 0; r < X16_ROWS; r++) out[r] = acc[r];
}

/*
 * fs_matmul_F_x16_V over a kernel(group-block, activation row, blocks, out) that computes one group's 16 outputs
 * for one activation row.
 */
#define FS_MATMUL_X16(F, V, ELEMENTS, ACT_BYTES, GROUP_BLOCK, kernel)                                                \
    FS_MATMUL_X16_EXPANDED(F, V, ELEMENTS, ACT_BYTES, GROUP_BLOCK, kernel)
#define FS_MATMUL_X16_EXPANDED(F, V, ELEMENTS, ACT_BYTES, GROUP_BLOCK, kernel)                                       \
    FS_API void fs_matmul_##F##_x16_##V(const void *packed, int row_from, int row_to, const void *act, int act_rows, \
                                        int k, float *out, int64_t out_stride) {                                     \
        int blocks = k / (ELEMENTS);                                                                                 \
        int64_t act_row_bytes = (int64_t)blocks * (ACT_BYTES), group_bytes = (int64_t)blocks * (GROUP_BLOCK);        \
        for (int g = row_from / X16_ROWS; g < row_to / X16_ROWS; g++)                                                \
            for (int r = 0; r < act_rows; r++)                                                                       \
                kernel((const uint8_t *)packed + g * group_bytes, (const uint8_t *)act + r * act_row_bytes, blocks,  \
                       out + r * out_stride + X16_ROWS * g);                                                         \
    }

#endif
