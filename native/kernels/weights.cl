// Kernels that read F32, F16 or BF16 weights (blocks.cl reads the block formats). The program is built once per weight
// dtype with -D W_F32, -D W_F16 or -D W_BF16, so every load below is a compile-time conversion to float; all
// arithmetic is float32. The sizes shared with the launches come as -D defines (KernelConstants).
// Two designs: *_gpu kernels use work-groups with local-memory reductions; *_cpu kernels give each work-item whole
// rows and no barriers, which suits CPU devices (PoCL) where a barrier costs a work-item loop split.

#include "reductions.h"

#if defined(W_F32)
typedef float wtype;
#define LOAD1(p, i) ((p)[i])
#define LOAD4(p, i) vload4((i), (p))
#define LOAD8(p, i) vload8((i), (p))
#define LOAD16(p, i) vload16((i), (p))
#elif defined(W_F16)
typedef half wtype; // storage only: vload_half needs no cl_khr_fp16
#define LOAD1(p, i) vload_half((i), (p))
#define LOAD4(p, i) vload_half4((i), (p))
#define LOAD8(p, i) vload_half8((i), (p))
#define LOAD16(p, i) vload_half16((i), (p))
#elif defined(W_BF16)
typedef ushort wtype; // bfloat16 is the high half of a float32
#define LOAD1(p, i) as_float((uint)(p)[i] << 16)
#define LOAD4(p, i) as_float4(convert_uint4(vload4((i), (p))) << 16)
#define LOAD8(p, i) as_float8(convert_uint8(vload8((i), (p))) << 16)
#define LOAD16(p, i) as_float16(convert_uint16(vload16((i), (p))) << 16)
#else
#error "build with -D W_F32, -D W_F16 or -D W_BF16"
#endif

#if !defined(TILE) || !defined(WG) || DENSE_CHUNK != 8 || OUT_BLOCK != 4
#error "build with KernelConstants' defines: TILE, WG, DENSE_CHUNK=8, OUT_BLOCK=4 (the code spells out the last two)"
#endif


// The embedding: rows of a weight table to float32, out[r, c] = table[tokens[r], c]; global size (columns, tokens).
// One work-item per weight suits these types, where a weight is a load; a block format decodes whole pieces of a
// block at a time instead (blocks.cl's embed).
__kernel void embed(__global const wtype* table, __global const int* tokens, __global float* out, int columns) {
    size_t c = get_global_id(0);
    size_t r = get_global_id(1);
    if (c >= (size_t)columns) return;
    out[r * columns + c] = LOAD1(table, (size_t)tokens[r] * columns + c);
}

// One work-group per row; out may be x (each element is read, then written, by the same work-item).
__kernel void rmsnorm_gpu(__global const float* x, __global const wtype* gamma, __global float* out, int width,
                          float eps, __local float* scratch) {
    size_t row = get_group_id(0);
    int lid = get_local_id(0);
    int size = get_local_size(0);
    __global const float* xr = x + row * width;
    __global float* outr = out + row * width;
    float squares = 0.0f;
    for (int i = lid; i < width; i += size) squares += xr[i] * xr[i];
    float inv = 1.0f / sqrt(local_sum(scratch, squares) / width + eps);
    for (int i = lid; i < width; i += size) outr[i] = xr[i] * inv * LOAD1(gamma, i);
}

// One work-item per row.
__kernel void rmsnorm_cpu(__global const float* x, __global const wtype* gamma, __global float* out, int width,
                          float eps, int rows) {
    size_t row = get_global_id(0);
    if (row >= (size_t)rows) return;
    __global const float* xr = x + row * width;
    __global float* outr = out + row * width;
    float squares = 0.0f;
    for (int i = 0; i < width; i++) squares += xr[i] * xr[i];
    float inv = 1.0f / sqrt(squares / width + eps);
    for (int i = 0; i < width; i++) outr[i] = xr[i] * inv * LOAD1(gamma, i);
}

// Decode (one input row), GPU design: one work-group per output n; each work-item takes every L-th chunk of
// DENSE_CHUNK = 8 weights of the row, then the group sums in local memory.
__kernel void matmul_decode_gpu(__global const float* x, __global const wtype* w, __global float* out, int K,
                                __local float* scratch) {
    size_t n = get_group_id(0);
    int lid = get_local_id(0);
    int size = get_local_size(0);
    __global const wtype* wr = w + n * K;
    int chunks = K / 8;
    float8 acc = 0.0f;
    for (int i = lid; i < chunks; i += size) acc += vload8(i, x) * LOAD8(wr, i);
    float partial = sum8(acc);
    for (int k = chunks * 8 + lid; k < K; k += size) partial += x[k] * LOAD1(wr, k);
    float total = local_sum(scratch, partial);
    if (lid == 0) out[n] = total;
}

// Both prefill kernels write output n of input row r at out[r * out_stride + out_first + n]: a dense weight's matmul
// fills all of out (out_first 0, out_stride N); a block format's fills it one dequantized panel of weight rows at a
// time (OpenClBackend), each panel its own columns.

// Prefill (many input rows), GPU design: each work-group computes a TILE×TILE block of out (rows × outputs) with WG×WG
// work-items of 4×4 outputs each: rows tr + WG·i and outputs tn + WG·j, so that local reads are broadcasts (xs) or hit
// distinct banks (ws, rows padded to TK + 1). Per K-step of TK the group stages TILE×TK inputs and TILE×TK weights in
// local memory, each weight converted to float once, as it is loaded; every work-item loads 4-element chunks,
// consecutive work-items consecutive chunks of a row.
#define TK 32
#define PER_ITEM (TILE / WG)

// Elements k..k+3 of a row of length K (k a multiple of 4), zero past the end.
static float4 load4_input(__global const float* row, int k, int K) {
    if (k + 4 <= K) return vload4(k / 4, row);
    float4 v = 0.0f;
    if (k < K) v.s0 = row[k];
    if (k + 1 < K) v.s1 = row[k + 1];
    if (k + 2 < K) v.s2 = row[k + 2];
    return v;
}

static float4 load4_weight(__global const wtype* row, int k, int K) {
    if (k + 4 <= K) return LOAD4(row, k / 4);
    float4 v = 0.0f;
    if (k < K) v.s0 = LOAD1(row, k);
    if (k + 1 < K) v.s1 = LOAD1(row, k + 1);
    if (k + 2 < K) v.s2 = LOAD1(row, k + 2);
    return v;
}

static void store4(__local float* p, float4 v) {
    p[0] = v.s0;
    p[1] = v.s1;
    p[2] = v.s2;
    p[3] = v.s3;
}

__kernel __attribute__((reqd_work_group_size(WG, WG, 1)))
void matmul_rows_gpu(__global const float* x, __global const wtype* w, __global float* out, int rows, int K, int N,
                     int out_first, int out_stride) {
    int tn = get_local_id(0);
    int tr = get_local_id(1);
    int lid = tr * WG + tn;
    int r0 = get_group_id(1) * TILE;
    int n0 = get_group_id(0) * TILE;
    __local float xs[TILE * (TK + 1)];
    __local float ws[TILE * (TK + 1)];
    float acc[PER_ITEM][PER_ITEM];
    for (int i = 0; i < PER_ITEM; i++) {
        for (int j = 0; j < PER_ITEM; j++) acc[i][j] = 0.0f;
    }
    for (int k0 = 0; k0 < K; k0 += TK) {
        for (int slot = lid; slot < TILE * TK / 4; slot += WG * WG) {
            int row = slot / (TK / 4);
            int k = (slot % (TK / 4)) * 4;
            float4 xv = r0 + row < rows ? load4_input(x + (size_t)(r0 + row) * K, k0 + k, K) : 0.0f;
            float4 wv = n0 + row < N ? load4_weight(w + (size_t)(n0 + row) * K, k0 + k, K) : 0.0f;
            store4(xs + row * (TK + 1) + k, xv);
            store4(ws + row * (TK + 1) + k, wv);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TK; k++) {
            float a[PER_ITEM];
            float b[PER_ITEM];
            for (int i = 0; i < PER_ITEM; i++) a[i] = xs[(tr + WG * i) * (TK + 1) + k];
            for (int j = 0; j < PER_ITEM; j++) b[j] = ws[(tn + WG * j) * (TK + 1) + k];
            for (int i = 0; i < PER_ITEM; i++) {
                for (int j = 0; j < PER_ITEM; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < PER_ITEM; i++) {
        int r = r0 + tr + WG * i;
        if (r >= rows) break;
        for (int j = 0; j < PER_ITEM; j++) {
            int n = n0 + tn + WG * j;
            if (n < N) out[(size_t)r * out_stride + out_first + n] = acc[i][j];
        }
    }
}

// Decode, CPU design: work-item n computes out[n] with two independent 8-wide accumulators; no barriers.
__kernel void matmul_decode_cpu(__global const float* x, __global const wtype* w, __global float* out, int K, int N) {
    int n = get_global_id(0);
    if (n >= N) return;
    __global const wtype* wr = w + (size_t)n * K;
    int pairs = K / 16;
    float8 acc0 = 0.0f;
    float8 acc1 = 0.0f;
    for (int i = 0; i < pairs; i++) {
        acc0 += vload8(2 * i, x) * LOAD8(wr, 2 * i);
        acc1 += vload8(2 * i + 1, x) * LOAD8(wr, 2 * i + 1);
    }
    float total = sum8(acc0 + acc1);
    for (int k = pairs * 16; k < K; k++) total += x[k] * LOAD1(wr, k);
    out[n] = total;
}

// Prefill (many input rows), CPU design: work-item b computes outputs 4b..4b+3 (OUT_BLOCK = 4) for every input row,
// four rows at a time, as a 4×4 register tile of 16-wide partial sums (one AVX-512 register each); no barriers. Its
// four weight rows stay in L1 while the input rows stream from L2, so every weight is read from memory once per matmul.
// The tile is spelled out in named variables because PoCL does not unroll loops over small arrays and would keep them
// on the stack. Outputs past N and rows past the last are computed on clamped (valid) indices and not stored, so the
// inner loop has no branches.
#define TILE_ROW(i, xv) \
    acc##i##0 += xv * w0v; \
    acc##i##1 += xv * w1v; \
    acc##i##2 += xv * w2v; \
    acc##i##3 += xv * w3v;

static void store_tile_row(__global float* out, __global const float* xr, float16 a0, float16 a1, float16 a2,
                           float16 a3, __global const wtype* w0, __global const wtype* w1, __global const wtype* w2,
                           __global const wtype* w3, int tail, int K, int outputs) {
    float t[4] = {sum16(a0), sum16(a1), sum16(a2), sum16(a3)};
    for (int k = tail; k < K; k++) {
        t[0] += xr[k] * LOAD1(w0, k);
        t[1] += xr[k] * LOAD1(w1, k);
        t[2] += xr[k] * LOAD1(w2, k);
        t[3] += xr[k] * LOAD1(w3, k);
    }
    for (int j = 0; j < outputs; j++) out[j] = t[j];
}

__kernel void matmul_rows_cpu(__global const float* x, __global const wtype* w, __global float* out, int rows, int K,
                              int N, int out_first, int out_stride) {
    int n0 = get_global_id(0) * OUT_BLOCK;
    if (n0 >= N) return;
    int outputs = min(OUT_BLOCK, N - n0);
    __global const wtype* w0 = w + (size_t)n0 * K;
    __global const wtype* w1 = w + (size_t)min(n0 + 1, N - 1) * K;
    __global const wtype* w2 = w + (size_t)min(n0 + 2, N - 1) * K;
    __global const wtype* w3 = w + (size_t)min(n0 + 3, N - 1) * K;
    int chunks = K / 16;
    for (int r0 = 0; r0 < rows; r0 += 4) {
        __global const float* x0 = x + (size_t)r0 * K;
        __global const float* x1 = x + (size_t)min(r0 + 1, rows - 1) * K;
        __global const float* x2 = x + (size_t)min(r0 + 2, rows - 1) * K;
        __global const float* x3 = x + (size_t)min(r0 + 3, rows - 1) * K;
        float16 acc00 = 0.0f, acc01 = 0.0f, acc02 = 0.0f, acc03 = 0.0f;
        float16 acc10 = 0.0f, acc11 = 0.0f, acc12 = 0.0f, acc13 = 0.0f;
        float16 acc20 = 0.0f, acc21 = 0.0f, acc22 = 0.0f, acc23 = 0.0f;
        float16 acc30 = 0.0f, acc31 = 0.0f, acc32 = 0.0f, acc33 = 0.0f;
        for (int c = 0; c < chunks; c++) {
            float16 w0v = LOAD16(w0, c), w1v = LOAD16(w1, c), w2v = LOAD16(w2, c), w3v = LOAD16(w3, c);
            float16 xv = vload16(c, x0);
            TILE_ROW(0, xv)
            xv = vload16(c, x1);
            TILE_ROW(1, xv)
            xv = vload16(c, x2);
            TILE_ROW(2, xv)
            xv = vload16(c, x3);
            TILE_ROW(3, xv)
        }
        int tail = chunks * 16;
        __global float* o = out + (size_t)r0 * out_stride + out_first + n0;
        store_tile_row(o, x0, acc00, acc01, acc02, acc03, w0, w1, w2, w3, tail, K, outputs);
        if (r0 + 1 < rows) {
            store_tile_row(o + out_stride, x1, acc10, acc11, acc12, acc13, w0, w1, w2, w3, tail, K, outputs);
        }
        if (r0 + 2 < rows) {
            store_tile_row(o + 2 * out_stride, x2, acc20, acc21, acc22, acc23, w0, w1, w2, w3, tail, K, outputs);
        }
        if (r0 + 3 < rows) {
            store_tile_row(o + 3 * out_stride, x3, acc30, acc31, acc32, acc33, w0, w1, w2, w3, tail, K, outputs);
        }
    }
}
