// Q4_0: 32 weights in 18 bytes, an f16 scale d then 16 bytes whose low nibbles are weights 0..15 and high nibbles
// 16..31; y = (nibble - 8) * d. One piece per block.
#ifndef FS_Q4_0_H
#define FS_Q4_0_H

#include "piece.h"

#if BLOCK_ELEMENTS != 32 || BLOCK_BYTES != 18
#error "Q4_0 blocks are 32 weights in 18 bytes"
#endif

static piece decode_piece(__global const uchar* block, int p) {
    float d = f16_at(block, 0);
    int16 q = convert_int16(vload16(0, block + 2));
    return make_piece(convert_float16((q & 0xF) - 8) * d, convert_float16((q >> 4) - 8) * d);
}

#endif
