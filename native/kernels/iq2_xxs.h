// IQ2_XXS: 256 weights in 66 bytes: f16 d, then per group of 32 (piece p = group p) two little-endian uint32s at
// byte 2 + 8p: the grid word, whose byte k picks the grid point (iq2_xxs_grid.h) of weights 8k..8k+7, and the sign
// word, whose bits 7k..7k+6 are the signs of weights 8k..8k+6 (the 8th makes the count of minus signs even) and
// whose bits 28..31 are the group's scale s. y = ±(d * (0.5 + s) * 0.25) * magnitude.
#ifndef FS_IQ2_XXS_H
#define FS_IQ2_XXS_H

#include "piece.h"
#include "iq2_xxs_grid.h"

#if BLOCK_ELEMENTS != 256 || BLOCK_BYTES != 66
#error "IQ2_XXS blocks are 256 weights in 66 bytes"
#endif

// Weights 8k..8k+7 of a group: grid point `index`, signs from 7 stored bits.
static float8 iq2_xxs_octet(float db, uchar index, uint stored_signs) {
    uint signs = stored_signs | (popcount(stored_signs) & 1) << 7;
    float8 magnitude = db * convert_float8(as_uchar8(iq2xxs_grid[index]));
    int8 sign_in_top_bit = (int8)(signs) << (int8)(31, 30, 29, 28, 27, 26, 25, 24);
    return select(magnitude, -magnitude, sign_in_top_bit);
}

static piece decode_piece(__global const uchar* block, int p) {
    // the group's words start at 2 (mod 4): read them as pairs of ushorts
    ushort4 halves = vload4(0, (__global const ushort*)(block + 2 + 8 * p));
    uint grid = halves.s0 | (uint)halves.s1 << 16;
    uint signs = halves.s2 | (uint)halves.s3 << 16;
    float db = f16_at(block, 0) * (0.5f + (signs >> 28)) * 0.25f;
    float8 w0 = iq2_xxs_octet(db, grid & 0xFF, signs & 0x7F);
    float8 w1 = iq2_xxs_octet(db, grid >> 8 & 0xFF, signs >> 7 & 0x7F);
    float8 w2 = iq2_xxs_octet(db, grid >> 16 & 0xFF, signs >> 14 & 0x7F);
    float8 w3 = iq2_xxs_octet(db, grid >> 24, signs >> 21 & 0x7F);
    return make_piece((float16)(w0, w1), (float16)(w2, w3));
}

#endif
