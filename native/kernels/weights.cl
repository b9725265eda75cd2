// Kernels that read weights. The program is built once per weight dtype with -D W_F32, -D W_F16 or -D W_BF16, so
// every load below is a compile-time conversion to float; all arithmetic is float32.
// Two designs: *_gpu kernels use work-groups with local-memory reductions; *_cpu kernels give each work-item whole
// rows and no barriers, which suits CPU devices (PoCL) where a barrier costs a work-item loop split.

#if defined(W_F32)
typedef float wtype;
#define LOAD1(p, i) ((p)[i])
#define LOAD8(p, i) vload8((i), (p))
#elif defined(W_F16)
typedef half wtype; // storage only: vload_half needs no cl_khr_fp16
#define LOAD1(p, i) vload_half((i), (p))
#define LOAD8(p, i) vload_half8((i), (p))
#elif defined(W_BF16)
typedef ushort wtype; // bfloat16 is the high half of a float32
#define LOAD1(p, i) as_float((uint)(p)[i] << 16)
#define LOAD8(p, i) as_float8(convert_uint8(vload8((i), (p))) << 16)
#else
#error "build with -D W_F32, -D W_F16 or -D W_BF16"
#endif

static float sum8(float8 v) {
    float4 a = v.lo + v.hi;
    return (a.x + a.y) + (a.z + a.w);
}

// Tree reduction of scratch[0..L) (L a power of two) into scratch[0]; every work-item must call it.
static float local_sum(__local float* scratch, float value) {
    int lid = get_local_id(0);
    scratch[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int half_size = get_local_size(0) / 2; half_size > 0; half_size >>= 1) {
        if (lid < half_size) scratch[lid] += scratch[lid + half_size];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float total = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

// out[r, c] = table[tokens[r], c]; global size (columns, rows).
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

// Decode (one input row): one work-group per output n; each work-item takes every L-th 8-wide chunk of the weight
// row, then the group sums in local memory.
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

// Prefill (many input rows): TILE×TILE outputs per work-group, both operands staged in local memory per K-step.
#define TILE 16
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul_tiled_gpu(__global const float* x, __global const wtype* w, __global float* out, int rows, int K, int N) {
    int tn = get_local_id(0);
    int tr = get_local_id(1);
    int n0 = get_group_id(0) * TILE;
    int r = get_group_id(1) * TILE + tr;
    __local float xs[TILE][TILE + 1];
    __local float ws[TILE][TILE + 1];
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int k = k0 + tn;
        xs[tr][tn] = (r < rows && k < K) ? x[(size_t)r * K + k] : 0.0f;
        ws[tr][tn] = (n0 + tr < N && k < K) ? LOAD1(w, (size_t)(n0 + tr) * K + k) : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < TILE; j++) acc += xs[tr][j] * ws[tn][j];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (r < rows && n0 + tn < N) out[(size_t)r * N + n0 + tn] = acc;
}

// CPU design, one input row: work-item n computes out[n] with two independent 8-wide accumulators; no barriers.
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

// CPU design: work-item (n, b) computes out[r, n] for the ROW_BLOCK input rows r of block b, so a weight row is read
// once per block; no barriers.
#define ROW_BLOCK 4
__kernel void matmul_cpu(__global const float* x, __global const wtype* w, __global float* out, int rows, int K,
                         int N) {
    int n = get_global_id(0);
    int r0 = get_global_id(1) * ROW_BLOCK;
    if (n >= N) return;
    int block = min(ROW_BLOCK, rows - r0);
    __global const wtype* wr = w + (size_t)n * K;
    __global const float* xb = x + (size_t)r0 * K;
    int chunks = K / 8;
    float8 acc[ROW_BLOCK] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < chunks; i++) {
        float8 wv = LOAD8(wr, i);
        for (int j = 0; j < block; j++) acc[j] += vload8(i, xb + (size_t)j * K) * wv;
    }
    for (int j = 0; j < block; j++) {
        float total = sum8(acc[j]);
        for (int k = chunks * 8; k < K; k++) total += xb[(size_t)j * K + k] * LOAD1(wr, k);
        out[(size_t)(r0 + j) * N + n] = total;
    }
}
