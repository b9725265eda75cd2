// Kernels that read block-quantized weights where they lie, with no float copy: the program is built once per format,
// from the format's header (<format>.h, fs.tensor.DType's kernelName) followed by this file, with the format's
// geometry as -D BLOCK_ELEMENTS and -D BLOCK_BYTES (fs.tensor.DType's, which the header checks). The header gives
// decode_piece (see piece.h); everything here is the same for every format. A row of K weights is K / BLOCK_ELEMENTS
// blocks back to back, each PIECES pieces of 32. Activations and results are float32; so is every product and sum.

#include "reductions.h"

#define PIECES (BLOCK_ELEMENTS / PIECE)

// Piece i of a row (counting from the row's first weight) and where it starts.
static piece row_piece(__global const uchar* row, int i) {
    return decode_piece(row + (size_t)(i / PIECES) * BLOCK_BYTES, i % PIECES);
}

static void store_piece(__global float* out, piece w) {
    vstore16(w.lo, 0, out);
    vstore16(w.hi, 1, out);
}

static float16 dot_piece(float16 acc, piece w, __global const float* x) {
    return fma(w.hi, vload16(1, x), fma(w.lo, vload16(0, x), acc));
}

// Rows first_row.. of w (columns weights each) to float32, exactly as llama.cpp dequantizes them, into out (row r of
// the range at out + r * columns): for a prefill panel, and for testing the decoding itself. Global size
// (columns / 32, rows).
__kernel void dequantize(__global const uchar* w, __global float* out, int columns, int first_row) {
    size_t i = get_global_id(0);
    size_t r = get_global_id(1);
    size_t row_bytes = (size_t)(columns / BLOCK_ELEMENTS) * BLOCK_BYTES;
    store_piece(out + r * columns + i * PIECE, row_piece(w + (first_row + r) * row_bytes, i));
}

// The embedding: out[r] = row tokens[r] of the table, dequantized; global size (columns / 32, tokens).
__kernel void embed(__global const uchar* table, __global const int* tokens, __global float* out, int columns) {
    size_t i = get_global_id(0);
    size_t r = get_global_id(1);
    size_t row_bytes = (size_t)(columns / BLOCK_ELEMENTS) * BLOCK_BYTES;
    store_piece(out + r * columns + i * PIECE, row_piece(table + (size_t)tokens[r] * row_bytes, i));
}

// Decode, GPU design: one work-group per output n; work-item t takes pieces t, t + L, ... of the weight row, so a
// group streams each block once, then the group sums in local memory. Same arguments as weights.cl's.
__kernel void matmul_decode_gpu(__global const float* x, __global const uchar* w, __global float* out, int K,
                                __local float* scratch) {
    size_t n = get_group_id(0);
    int lid = get_local_id(0);
    int size = get_local_size(0);
    __global const uchar* wr = w + n * (size_t)(K / BLOCK_ELEMENTS) * BLOCK_BYTES;
    int pieces = K / PIECE;
    float16 acc = 0.0f;
    for (int i = lid; i < pieces; i += size) acc = dot_piece(acc, row_piece(wr, i), x + i * PIECE);
    float total = local_sum(scratch, sum16(acc));
    if (lid == 0) out[n] = total;
}

// Decode, CPU design: work-item n computes out[n] over its row's blocks in order; no barriers. Same arguments as
// weights.cl's.
__kernel void matmul_decode_cpu(__global const float* x, __global const uchar* w, __global float* out, int K, int N) {
    int n = get_global_id(0);
    if (n >= N) return;
    int blocks = K / BLOCK_ELEMENTS;
    __global const uchar* wr = w + (size_t)n * blocks * BLOCK_BYTES;
    float16 acc = 0.0f;
    for (int b = 0; b < blocks; b++) {
        __global const uchar* block = wr + (size_t)b * BLOCK_BYTES;
        __global const float* xb = x + b * BLOCK_ELEMENTS;
        for (int p = 0; p < PIECES; p++) acc = dot_piece(acc, decode_piece(block, p), xb + p * PIECE);
    }
    out[n] = sum16(acc);
}
