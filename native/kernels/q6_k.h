// Q6_K: 256 weights in 210 bytes: 128 bytes ql (low 4 bits), 64 bytes qh (high 2 bits), 16 int8 scales (one per
// group of 16), f16 d at 208. Piece p = 4h + c: low bits from the low (c < 2) or high nibbles of
// ql[64h + 32(c & 1) + l], high bits 2c..2c+1 of qh[32h + l]; groups 2p and 2p + 1. y = (d * scale) * (q - 32).
#ifndef FS_Q6_K_H
#define FS_Q6_K_H

#include "piece.h"

#if BLOCK_ELEMENTS != 256 || BLOCK_BYTES != 210
#error "Q6_K blocks are 256 weights in 210 bytes"
#endif

static float16 q6_k_group(float d, char scale, uchar16 low, uchar16 high) {
    return (d * scale) * convert_float16(convert_int16(low | high << (uchar)4) - 32);
}

static piece decode_piece(__global const uchar* block, int p) {
    int h = p / 4;
    int c = p % 4;
    __global const uchar* ql = block + 64 * h + 32 * (c & 1);
    __global const uchar* qh = block + 128 + 32 * h;
    uchar low_shift = 4 * (c >> 1);
    uchar high_shift = 2 * c;
    __global const char* scales = (__global const char*)(block + 192);
    float d = f16_at(block, 208);
    uchar16 low0 = (vload16(0, ql) >> low_shift) & (uchar)0xF;
    uchar16 low1 = (vload16(1, ql) >> low_shift) & (uchar)0xF;
    uchar16 high0 = (vload16(0, qh) >> high_shift) & (uchar)3;
    uchar16 high1 = (vload16(1, qh) >> high_shift) & (uchar)3;
    return make_piece(q6_k_group(d, scales[2 * p], low0, high0), q6_k_group(d, scales[2 * p + 1], low1, high1));
}

#endif
