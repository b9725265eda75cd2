// Q2_K: 256 weights in 84 bytes: 16 scale bytes (low nibble scale, high nibble min of a group of 16), 64 bytes of
// 2-bit quants, f16 d at 80, f16 dmin at 82. Piece p = 4h + s is bits 2s..2s+1 of quant bytes 32h..32h+31, groups
// 2p and 2p + 1. y = (d * scale) * q - (dmin * min).
#ifndef FS_Q2_K_H
#define FS_Q2_K_H

#include "piece.h"

#if BLOCK_ELEMENTS != 256 || BLOCK_BYTES != 84
#error "Q2_K blocks are 256 weights in 84 bytes"
#endif

static float16 q2_k_group(float d, float dmin, uchar packed, uchar16 quants, int shift) {
    float scale = d * (packed & 0xF);
    float min = dmin * (packed >> 4);
    return scale * convert_float16((quants >> (uchar)shift) & (uchar)3) - min;
}

static piece decode_piece(__global const uchar* block, int p) {
    float d = f16_at(block, 80);
    float dmin = f16_at(block, 82);
    __global const uchar* q = block + 16 + 32 * (p / 4);
    int shift = 2 * (p % 4);
    return make_piece(q2_k_group(d, dmin, block[2 * p], vload16(0, q), shift),
                      q2_k_group(d, dmin, block[2 * p + 1], vload16(1, q), shift));
}

#endif
