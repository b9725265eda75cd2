/*
 * Repacking Q4_K, Q4_0, Q8_0, Q6_K, Q2_K and Q3_K weights into groups of 16 interleaved rows (repacked.h has the layouts): done once, at
 * load, by the caller's threads (each a range of groups), the same for every variant.
 */
#include "repacked.h"

FS_API int64_t fs_repacked_bytes(const char *format, int64_t rows, int k) {
    if (rows <= 0 || rows % X16_ROWS != 0 || k <= 0) return 0;
    if (strcmp(format, "q4_k") == 0) return k % 256 == 0 ? rows / X16_ROWS * (k / 256) * Q4_K_X16_BLOCK : 0;
    if (strcmp(format, "q4_0") == 0) return k % 32 == 0 ? rows / X16_ROWS * (k / 32) * Q4_0_X16_BLOCK : 0;
    if (strcmp(format, "q8_0") == 0) return k % 32 == 0 ? rows / X16_ROWS * (k / 32) * Q8_0_X16_BLOCK : 0;
    if (strcmp(format, "q6_k") == 0) return k % 256 == 0 ? rows / X16_ROWS * (k / 256) * Q6_K_X16_BLOCK : 0;
    if (strcmp(format, "q2_k") == 0) return k % 256 == 0 ? rows / X16_ROWS * (k / 256) * Q2_K_X16_BLOCK : 0;
    if (strcmp(format, "q3_k") == 0) return k % 256 == 0 ? rows / X16_ROWS * (k / 256) * Q3_K_X16_BLOCK : 0;
    return 0;
}

FS_API void fs_repack_q4_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed) {
    int blocks = k / 256;
    for (int g = group_from; g < group_to; g++)
        for (int b = 0; b < blocks; b++) {
            uint8_t *gb = (uint8_t *)packed + ((int64_t)g * blocks + b) * Q4_K_X16_BLOCK;
            for (int r = 0; r < X16_ROWS; r++) {
                const uint8_t *block = (const uint8_t *)w + (int64_t)(X16_ROWS * g + r) * row_bytes + b * Q4_K_BLOCK;
                float d = half_to_float(load_u16(block)), dmin = half_to_float(load_u16(block + 2));
                memcpy(gb + Q4_K_X16_D + 4 * r, &d, sizeof d);
                memcpy(gb + Q4_K_X16_DMIN + 4 * r, &dmin, sizeof dmin);
                uint32_t sc[2], mn[2];
                q4_k_scales(block + 4, sc, mn);
                for (int c = 0; c < 8; c++) {
                    gb[Q4_K_X16_SCALES + 16 * c + r] = (uint8_t)(sc[c / 4] >> 8 * (c % 4));
                    gb[Q4_K_X16_MINS + 16 * c + r] = (uint8_t)(mn[c / 4] >> 8 * (c % 4));
                }
                for (int p = 0; p < 4; p++)
                    for (int l = 0; l < 8; l++)
                        memcpy(gb + Q4_K_X16_QS + 512 * p + 64 * l + 4 * r, block + 16 + 32 * p + 4 * l, 4);
            }
        }
}

FS_API void fs_repack_q4_0(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed) {
    int blocks = k / 32;
    for (int g = group_from; g < group_to; g++)
        for (int b = 0; b < blocks; b++) {
            uint8_t *gb = (uint8_t *)packed + ((int64_t)g * blocks + b) * Q4_0_X16_BLOCK;
            for (int r = 0; r < X16_ROWS; r++) {
                const uint8_t *block = (const uint8_t *)w + (int64_t)(X16_ROWS * g + r) * row_bytes + b * Q4_0_BLOCK;
                memcpy(gb + Q4_0_X16_D + 2 * r, block, 2);
                for (int l = 0; l < 4; l++) memcpy(gb + Q4_0_X16_QS + 64 * l + 4 * r, block + 2 + 4 * l, 4);
            }
        }
}

FS_API void fs_repack_q8_0(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed) {
    int blocks = k / 32;
    for (int g = group_from; g < group_to; g++)
        for (int b = 0; b < blocks; b++) {
            uint8_t *gb = (uint8_t *)packed + ((int64_t)g * blocks + b) * Q8_0_X16_BLOCK;
            for (int r = 0; r < X16_ROWS; r++) {
                const uint8_t *block = (const uint8_t *)w + (int64_t)(X16_ROWS * g + r) * row_bytes + b * Q8_0_BLOCK;
                memcpy(gb + Q8_0_X16_D + 2 * r, block, 2);
                for (int l = 0; l < 8; l++) memcpy(gb + Q8_0_X16_QS + 64 * l + 4 * r, block + 2 + 4 * l, 4);
            }
        }
}

FS_API void fs_repack_q6_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed) {
    int blocks = k / 256;
    for (int g = group_from; g < group_to; g++)
        for (int b = 0; b < blocks; b++) {
            uint8_t *gb = (uint8_t *)packed + ((int64_t)g * blocks + b) * Q6_K_X16_BLOCK;
            for (int r = 0; r < X16_ROWS; r++) {
                const uint8_t *block = (const uint8_t *)w + (int64_t)(X16_ROWS * g + r) * row_bytes + b * Q6_K_BLOCK;
                float d = half_to_float(load_u16(block + 208));
                memcpy(gb + Q6_K_X16_D + 4 * r, &d, sizeof d);
                for (int group = 0; group < 16; group++) gb[Q6_K_X16_SCALES + 16 * group + r] = block[192 + group];
                for (int h = 0; h < 2; h++)
                    for (int l = 0; l < 8; l++) {
                        uint8_t *step = gb + Q6_K_X16_QS + 1536 * h + 192 * l + 4 * r;
                        memcpy(step, block + 64 * h + 4 * l, 4);
                        memcpy(step + 64, block + 64 * h + 32 + 4 * l, 4);
                        memcpy(step + 128, block + 128 + 32 * h + 4 * l, 4);
                    }
            }
        }
}

FS_API void fs_repack_q2_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed) {
    int blocks = k / 256;
    for (int g = group_from; g < group_to; g++)
        for (int b = 0; b < blocks; b++) {
            uint8_t *gb = (uint8_t *)packed + ((int64_t)g * blocks + b) * Q2_K_X16_BLOCK;
            for (int r = 0; r < X16_ROWS; r++) {
                const uint8_t *block = (const uint8_t *)w + (int64_t)(X16_ROWS * g + r) * row_bytes + b * Q2_K_BLOCK;
                memcpy(gb + Q2_K_X16_D + 2 * r, block + 80, 2);
                memcpy(gb + Q2_K_X16_DMIN + 2 * r, block + 82, 2);
                for (int group = 0; group < 16; group++) gb[Q2_K_X16_SCALES + 16 * group + r] = block[group];
                for (int h = 0; h < 2; h++)
                    for (int l = 0; l < 8; l++)
                        memcpy(gb + Q2_K_X16_QS + 512 * h + 64 * l + 4 * r, block + 16 + 32 * h + 4 * l, 4);
            }
        }
}

FS_API void fs_repack_q3_k(const void *w, int64_t row_bytes, int group_from, int group_to, int k, void *packed) {
    int blocks = k / 256;
    for (int g = group_from; g < group_to; g++)
        for (int b = 0; b < blocks; b++) {
            uint8_t *gb = (uint8_t *)packed + ((int64_t)g * blocks + b) * Q3_K_X16_BLOCK;
            for (int r = 0; r < X16_ROWS; r++) {
                const uint8_t *block = (const uint8_t *)w + (int64_t)(X16_ROWS * g + r) * row_bytes + b * Q3_K_BLOCK;
                int16_t scales[16];
                q3_k_scales(block + 96, scales);
                memcpy(gb + Q3_K_X16_D + 2 * r, block + 108, 2);
                for (int group = 0; group < 16; group++) gb[Q3_K_X16_SCALES + 16 * group + r] = (uint8_t)scales[group];
                for (int l = 0; l < 8; l++) {
                    memcpy(gb + Q3_K_X16_HMASK + 64 * l + 4 * r, block + 4 * l, 4);
                    for (int h = 0; h < 2; h++)
                        memcpy(gb + Q3_K_X16_QS + 512 * h + 64 * l + 4 * r, block + 32 + 32 * h + 4 * l, 4);
                }
            }
        }
}
