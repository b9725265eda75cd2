// Q4_K: 256 weights in 144 bytes: f16 d, f16 dmin, 12 scale bytes (k_scales.h), 128 bytes of nibbles. Piece p is group
// p: the low (p even) or high (p odd) nibbles of bytes 16 + 32 (p / 2) .. +31. y = (d * scale) * q - (dmin * min).
#ifndef FS_Q4_K_H
#define FS_Q4_K_H

#include "piece.h"
#include "k_scales.h"

#if BLOCK_ELEMENTS != 256 || BLOCK_BYTES != 144
#error "Q4_K blocks are 256 weights in 144 bytes"
#endif

static piece decode_piece(__global const uchar* block, int p) {
    int2 scale_min = k_scale_min(block + 4, p);
    float scale = f16_at(block, 0) * scale_min.x;
    float min = f16_at(block, 2) * scale_min.y;
    __global const uchar* q = block + 16 + 32 * (p / 2);
    uchar shift = 4 * (p % 2);
    float16 lo = convert_float16((vload16(0, q) >> shift) & (uchar)0xF);
    float16 hi = convert_float16((vload16(1, q) >> shift) & (uchar)0xF);
    return make_piece(scale * lo - min, scale * hi - min);
}

#endif
