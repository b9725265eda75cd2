// Q5_K: Q4_K's layout with a fifth bit per weight: f16 d, f16 dmin, 12 scale bytes (k_scales.h), 32 bytes qh, 128
// bytes of nibbles. Piece p is group p: nibbles as in Q4_K (from byte 48), high bit p of qh[l].
// y = (d * scale) * (nibble | bit << 4) - (dmin * min).
#ifndef FS_Q5_K_H
#define FS_Q5_K_H

#include "piece.h"
#include "k_scales.h"

#if BLOCK_ELEMENTS != 256 || BLOCK_BYTES != 176
#error "Q5_K blocks are 256 weights in 176 bytes"
#endif

static piece decode_piece(__global const uchar* block, int p) {
    int2 scale_min = k_scale_min(block + 4, p);
    float scale = f16_at(block, 0) * scale_min.x;
    float min = f16_at(block, 2) * scale_min.y;
    __global const uchar* q = block + 48 + 32 * (p / 2);
    uchar shift = 4 * (p % 2);
    uchar16 lo = (vload16(0, q) >> shift) & (uchar)0xF;
    uchar16 hi = (vload16(1, q) >> shift) & (uchar)0xF;
    lo |= ((vload16(0, block + 16) >> (uchar)p) & (uchar)1) << (uchar)4;
    hi |= ((vload16(1, block + 16) >> (uchar)p) & (uchar)1) << (uchar)4;
    return make_piece(scale * convert_float16(lo) - min, scale * convert_float16(hi) - min);
}

#endif
