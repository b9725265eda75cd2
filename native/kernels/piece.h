// What every block format's header gives the kernels of blocks.cl: decode_piece(block, p), the 32 weights
// 32p..32p+31 of the block that starts at byte `block`, as float32, bit-exact to llama.cpp's reference
// dequantization (fs.quant.ReferenceDequantizer documents each layout; its comment says why the products here are
// exact, so the compiler contracting a multiply and a subtract into an fma changes no bit). f16 fields are read
// with vload_half, which needs no cl_khr_fp16; every block and every f16 in it starts at an even byte.
//
// A header checks the -D BLOCK_ELEMENTS and BLOCK_BYTES that the Java side passes (fs.tensor.DType's geometry)
// against its own layout, so that the two can never disagree silently.
#ifndef FS_PIECE_H
#define FS_PIECE_H

#if PIECE != 32
#error "the block formats' headers decode pieces of 32 weights: build with -D PIECE=32"
#endif

typedef struct {
    float16 lo; // weights 0..15 of the piece
    float16 hi; // weights 16..31
} piece;

static float f16_at(__global const uchar* block, int byte) {
    return vload_half(byte / 2, (__global const half*)block);
}

static piece make_piece(float16 lo, float16 hi) {
    piece p;
    p.lo = lo;
    p.hi = hi;
    return p;
}

#endif
