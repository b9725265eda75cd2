// Q3_K: 256 weights in 110 bytes: 32 bytes of high bits (hmask), 64 bytes of 2-bit quants, 12 bytes of 6-bit
// scales, f16 d at 108. Piece p = 4h + s: low bits are bits 2s..2s+1 of quant bytes 32h..32h+31, the high bit is bit
// p of hmask[l]; q = low + 4 * high - 4. Groups of 16 (2p and 2p + 1) have a scale stored plus 32: its low 4 bits
// are a nibble of bytes 0..7 (low nibbles groups 0..7), its top 2 bits from byte 8 + g % 4 at bit 2 (g / 4).
// y = (d * (scale - 32)) * q.
#ifndef FS_Q3_K_H
#define FS_Q3_K_H

#include "piece.h"

#if BLOCK_ELEMENTS != 256 || BLOCK_BYTES != 110
#error "Q3_K blocks are 256 weights in 110 bytes"
#endif

static float16 q3_k_group(__global const uchar* block, int g, uchar16 low, uchar16 high) {
    __global const uchar* scales = block + 96;
    int stored = (scales[g % 8] >> 4 * (g / 8) & 0xF) | (scales[8 + g % 4] >> 2 * (g / 4) & 3) << 4;
    float scale = f16_at(block, 108) * (stored - 32);
    return scale * convert_float16(convert_int16(low | high << (uchar)2) - 4);
}

static piece decode_piece(__global const uchar* block, int p) {
    __global const uchar* q = block + 32 + 32 * (p / 4);
    uchar shift = 2 * (p % 4);
    uchar16 low0 = (vload16(0, q) >> shift) & (uchar)3;
    uchar16 low1 = (vload16(1, q) >> shift) & (uchar)3;
    uchar16 high0 = (vload16(0, block) >> (uchar)p) & (uchar)1;
    uchar16 high1 = (vload16(1, block) >> (uchar)p) & (uchar)1;
    return make_piece(q3_k_group(block, 2 * p, low0, high0), q3_k_group(block, 2 * p + 1, low1, high1));
}

#endif
