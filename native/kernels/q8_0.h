// Q8_0: 32 weights in 34 bytes, an f16 scale d then 32 int8 q; y = q * d. One piece per block.
#ifndef FS_Q8_0_H
#define FS_Q8_0_H

#include "piece.h"

#if BLOCK_ELEMENTS != 32 || BLOCK_BYTES != 34
#error "Q8_0 blocks are 32 weights in 34 bytes"
#endif

static piece decode_piece(__global const uchar* block, int p) {
    float d = f16_at(block, 0);
    __global const char* q = (__global const char*)(block + 2);
    return make_piece(convert_float16(vload16(0, q)) * d, convert_float16(vload16(1, q)) * d);
}

#endif
