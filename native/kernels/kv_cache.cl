// The KV cache: store_<type> writes keys or values into it, attention_gpu and attention_cpu attend over it. Each of a
// layer's keys and values is laid out [sequence][position][kv_head][head_dim elements as its type], context_length
// positions per sequence: a position's row of kv_dim elements takes ROW_BYTES_<type>(kv_dim) bytes, a head's row
// ROW_BYTES_<type>(head_dim). Row r of a forward sits at row_positions[r]: .x its position, .y its sequence.
//
// The types, named and stored as llama.cpp's --cache-type-k/-v:
// - f32;
// - f16: IEEE half, rounded to nearest even;
// - bf16: the float's top 16 bits, rounded to nearest even (ggml's fp32_to_bf16);
// - q8_0: ggml's block_q8_0 per 32 elements of a head's row (so head_dim is whole blocks): a half scale d, then 32
//   int8 q; an element is q * d.
// The program is built for one type of keys and one of values, -D K_TYPE=<type> -D V_TYPE=<type>, which choose the
// attention kernels' load_k and load_v: an element read and dequantized in registers, with no float copy of the cache.
// The store kernels are the same in every build. The sizes shared with the launches come as -D defines
// (KernelConstants), q8_0's block geometry among them (fs.tensor.DType's, checked here).

#if !defined(ATTENTION_DIMS_PER_ITEM) || !defined(MAX_HEAD_DIM) || !defined(K_TYPE) || !defined(V_TYPE)
#error "build with KernelConstants' defines: ATTENTION_DIMS_PER_ITEM, MAX_HEAD_DIM, K_TYPE and V_TYPE"
#endif
#if Q8_0_BLOCK_ELEMENTS != 32 || Q8_0_BLOCK_BYTES != 34
#error "q8_0 blocks are 32 elements in 34 bytes"
#endif

#include "reductions.h"

#define ROW_BYTES_f32(n) ((size_t)(n) * 4)
#define ROW_BYTES_f16(n) ((size_t)(n) * 2)
#define ROW_BYTES_bf16(n) ((size_t)(n) * 2)
#define ROW_BYTES_q8_0(n) ((size_t)(n) / Q8_0_BLOCK_ELEMENTS * Q8_0_BLOCK_BYTES)

// Element d of a head's row as a float (load_<type>), and its 8 elements from 8 * c (load8_<type>).

static float load_f32(__global const uchar* row, int d) {
    return ((__global const float*)row)[d];
}

static float8 load8_f32(__global const uchar* row, int c) {
    return vload8(c, (__global const float*)row);
}

static float load_f16(__global const uchar* row, int d) {
    return vload_half(d, (__global const half*)row);
}

static float8 load8_f16(__global const uchar* row, int c) {
    return vload_half8(c, (__global const half*)row);
}

static float load_bf16(__global const uchar* row, int d) {
    return as_float((uint)((__global const ushort*)row)[d] << 16);
}

static float8 load8_bf16(__global const uchar* row, int c) {
    return as_float8(convert_uint8(vload8(c, (__global const ushort*)row)) << 16);
}

// A q8_0 block's scale as a float, exactly as vload_half gives it, but cheaper where vload_half converts in software
// (PoCL): a half's magnitude bits moved to a float's places, its exponent rebiased (by 127 - 15, or to all ones for an
// infinity or NaN); a subnormal half as its integer times 2^-24, which no flushing of subnormal floats can touch.
static float q8_0_scale(__global const uchar* block) {
    uint bits = ((__global const ushort*)block)[0];
    uint magnitude = bits & 0x7fff;
    float value = magnitude >= 0x7c00 ? as_float((magnitude << 13) + 0x70000000)
            : magnitude >= 0x0400 ? as_float((magnitude << 13) + 0x38000000)
            : (float)magnitude * 0x1p-24f;
    return as_float(as_uint(value) | (bits & 0x8000) << 16);
}

static float load_q8_0(__global const uchar* row, int d) {
    __global const uchar* block = row + (size_t)(d / Q8_0_BLOCK_ELEMENTS) * Q8_0_BLOCK_BYTES;
    float scale = q8_0_scale(block);
    return (float)((__global const char*)(block + 2))[d % Q8_0_BLOCK_ELEMENTS] * scale;
}

static float8 load8_q8_0(__global const uchar* row, int c) {
    __global const uchar* block = row + (size_t)(c / (Q8_0_BLOCK_ELEMENTS / 8)) * Q8_0_BLOCK_BYTES;
    float scale = q8_0_scale(block);
    return convert_float8(vload8(c % (Q8_0_BLOCK_ELEMENTS / 8), (__global const char*)(block + 2))) * scale;
}

// The build's types: K_TYPE f16 makes load_k load_f16 (WITH_TYPE expands the type before it is pasted).
#define PASTE(a, b) a##b
#define WITH_TYPE(name, type) PASTE(name, type)
#define K_ROW_BYTES(n) WITH_TYPE(ROW_BYTES_, K_TYPE)(n)
#define V_ROW_BYTES(n) WITH_TYPE(ROW_BYTES_, V_TYPE)(n)
#define load_k(row, d) WITH_TYPE(load_, K_TYPE)(row, d)
#define load8_k(row, c) WITH_TYPE(load8_, K_TYPE)(row, c)
#define load_v(row, d) WITH_TYPE(load_, V_TYPE)(row, d)
#define load8_v(row, c) WITH_TYPE(load8_, V_TYPE)(row, c)

// Where row r's position starts in a cache whose positions take position_bytes each.
static size_t position_offset(int2 at, int context_length, size_t position_bytes) {
    return ((size_t)at.y * context_length + at.x) * position_bytes;
}

// store_<type>: row r of x (kv_dim floats) goes to its sequence and position of cache, work-item (i, r) storing its
// element i, or for q8_0 its block i; global size (kv_dim / elements per work-item, rows). Keys and values are one
// launch each, as their types may differ.

__kernel void store_f32(__global const float* x, __global uchar* cache, __global const int2* row_positions,
                        int kv_dim, int context_length) {
    size_t i = get_global_id(0);
    size_t r = get_global_id(1);
    __global uchar* row = cache + position_offset(row_positions[r], context_length, ROW_BYTES_f32(kv_dim));
    ((__global float*)row)[i] = x[r * kv_dim + i];
}

__kernel void store_f16(__global const float* x, __global uchar* cache, __global const int2* row_positions,
                        int kv_dim, int context_length) {
    size_t i = get_global_id(0);
    size_t r = get_global_id(1);
    __global uchar* row = cache + position_offset(row_positions[r], context_length, ROW_BYTES_f16(kv_dim));
    vstore_half_rte(x[r * kv_dim + i], i, (__global half*)row);
}

__kernel void store_bf16(__global const float* x, __global uchar* cache, __global const int2* row_positions,
                         int kv_dim, int context_length) {
    size_t i = get_global_id(0);
    size_t r = get_global_id(1);
    __global uchar* row = cache + position_offset(row_positions[r], context_length, ROW_BYTES_bf16(kv_dim));
    uint u = as_uint(x[r * kv_dim + i]);
    // ggml's fp32_to_bf16: a NaN keeps its sign and top bits, made quiet (rounding could carry it to infinity);
    // anything else rounds to nearest even.
    uint bits = (u & 0x7fffffff) > 0x7f800000 ? (u >> 16) | 64 : (u + (0x7fff + ((u >> 16) & 1))) >> 16;
    ((__global ushort*)row)[i] = (ushort)bits;
}

// ggml's quantize_row_q8_0_ref: d = amax / 127 stored as half (round to nearest even), q = x / d rounded half away
// from zero, computed as x * (1 / d) as ggml does, 0 for a block of zeros.
__kernel void store_q8_0(__global const float* x, __global uchar* cache, __global const int2* row_positions,
                         int kv_dim, int context_length) {
    size_t b = get_global_id(0);
    size_t r = get_global_id(1);
    __global const float* elements = x + r * kv_dim + b * Q8_0_BLOCK_ELEMENTS;
    __global uchar* block = cache + position_offset(row_positions[r], context_length, ROW_BYTES_q8_0(kv_dim))
            + b * Q8_0_BLOCK_BYTES;
    float amax = 0.0f;
    for (int j = 0; j < Q8_0_BLOCK_ELEMENTS; j++) amax = fmax(amax, fabs(elements[j]));
    float d = amax / 127;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    vstore_half_rte(d, 0, (__global half*)block);
    __global char* q = (__global char*)(block + 2);
    for (int j = 0; j < Q8_0_BLOCK_ELEMENTS; j++) q[j] = (char)round(elements[j] * id);
}

// Causal GQA, one work-group of L work-items per (head, row), over chunks of L positions with an online softmax:
// - scores: work-item t scores position p0 + t (q staged in local memory); one max reduction per chunk; each work-item
//   keeps the running sum of its own probabilities, reduced once at the end;
// - values: the work-group is split into L / lanes slices of lanes = min(head_dim, L) work-items; slice s adds the
//   positions s, s + slices, ... of the chunk, lane l owns dims l, l + lanes, ... (at most ATTENTION_DIMS_PER_ITEM), so
//   consecutive work-items read consecutive elements of a value row; the slices' accumulators are summed at the end.
__kernel void attention_gpu(__global const float* q, __global const uchar* k_cache, __global const uchar* v_cache,
                            __global float* out, __global const int2* row_positions, int heads, int kv_heads,
                            int head_dim, int context_length, float scale, __local float* qs, __local float* probs,
                            __local float* scratch) {
    int h = get_group_id(0);
    int r = get_group_id(1);
    int lid = get_local_id(0);
    int size = get_local_size(0);
    int kv_dim = kv_heads * head_dim;
    int2 at = row_positions[r];
    size_t k_position_bytes = K_ROW_BYTES(kv_dim);
    size_t v_position_bytes = V_ROW_BYTES(kv_dim);
    int kv_head = h / (heads / kv_heads);
    __global const uchar* k_head = k_cache + (size_t)at.y * context_length * k_position_bytes
            + kv_head * K_ROW_BYTES(head_dim);
    __global const uchar* v_head = v_cache + (size_t)at.y * context_length * v_position_bytes
            + kv_head * V_ROW_BYTES(head_dim);
    size_t q_base = ((size_t)r * heads + h) * head_dim;
    for (int d = lid; d < head_dim; d += size) qs[d] = q[q_base + d];
    barrier(CLK_LOCAL_MEM_FENCE);

    int lanes = min(head_dim, size);
    int slices = size / lanes;
    int lane = lid % lanes;
    int slice = lid / lanes;
    int dims = (head_dim + lanes - 1) / lanes;
    int length = at.x + 1;
    float running_max = -INFINITY;
    float own_sum = 0.0f;
    float acc[ATTENTION_DIMS_PER_ITEM];
    for (int j = 0; j < ATTENTION_DIMS_PER_ITEM; j++) acc[j] = 0.0f;
    for (int p0 = 0; p0 < length; p0 += size) {
        int p = p0 + lid;
        float score = -INFINITY;
        if (p < length) {
            __global const uchar* kr = k_head + (size_t)p * k_position_bytes;
            float dot = 0.0f;
            for (int d = 0; d < head_dim; d++) dot += qs[d] * load_k(kr, d);
            score = dot * scale;
        }
        float new_max = fmax(running_max, local_max(scratch, score));
        float correction = exp(running_max - new_max);
        float prob = p < length ? exp(score - new_max) : 0.0f;
        own_sum = own_sum * correction + prob;
        running_max = new_max;
        probs[lid] = prob;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (slice < slices) {
            int count = min(size, length - p0);
            __global const uchar* vb = v_head + (size_t)p0 * v_position_bytes;
            for (int j = 0; j < dims; j++) {
                int d = lane + j * lanes;
                if (d >= head_dim) break;
                float a = acc[j] * correction;
                for (int t = slice; t < count; t += slices) {
                    a += probs[t] * load_v(vb + (size_t)t * v_position_bytes, d);
                }
                acc[j] = a;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float total = local_sum(scratch, own_sum);
    for (int j = 0; j < dims; j++) {
        int d = lane + j * lanes;
        scratch[lid] = slice < slices && d < head_dim ? acc[j] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (slice == 0 && d < head_dim) {
            float sum = 0.0f;
            for (int s = 0; s < slices; s++) sum += scratch[s * lanes + lane];
            out[q_base + d] = sum / total;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#define POSITION_BLOCK 8

// CPU design: one work-item per (head, row), no barriers. Positions go in blocks of POSITION_BLOCK: their scores
// first, then one online-softmax rescale per block and one pass over the accumulator that adds all their values, so
// the accumulator is loaded and stored once per block. head_dim <= MAX_HEAD_DIM.
__kernel void attention_cpu(__global const float* q, __global const uchar* k_cache, __global const uchar* v_cache,
                            __global float* out, __global const int2* row_positions, int heads, int kv_heads,
                            int head_dim, int context_length, float scale) {
    int h = get_global_id(0);
    int r = get_global_id(1);
    int kv_dim = kv_heads * head_dim;
    int2 at = row_positions[r];
    size_t k_position_bytes = K_ROW_BYTES(kv_dim);
    size_t v_position_bytes = V_ROW_BYTES(kv_dim);
    int kv_head = h / (heads / kv_heads);
    __global const uchar* k_head = k_cache + (size_t)at.y * context_length * k_position_bytes
            + kv_head * K_ROW_BYTES(head_dim);
    __global const uchar* v_head = v_cache + (size_t)at.y * context_length * v_position_bytes
            + kv_head * V_ROW_BYTES(head_dim);
    __global const float* qr = q + ((size_t)r * heads + h) * head_dim;
    int chunks = head_dim / 8;
    float acc[MAX_HEAD_DIM];
    for (int d = 0; d < head_dim; d++) acc[d] = 0.0f;
    float running_max = -INFINITY;
    float running_sum = 0.0f;
    int length = at.x + 1;
    for (int p0 = 0; p0 < length; p0 += POSITION_BLOCK) {
        int count = min(POSITION_BLOCK, length - p0);
        float probs[POSITION_BLOCK];
        float block_max = -INFINITY;
        for (int j = 0; j < count; j++) {
            __global const uchar* kr = k_head + (size_t)(p0 + j) * k_position_bytes;
            float8 dots = 0.0f;
            for (int c = 0; c < chunks; c++) dots += vload8(c, qr) * load8_k(kr, c);
            float dot = sum8(dots);
            for (int d = chunks * 8; d < head_dim; d++) dot += qr[d] * load_k(kr, d);
            probs[j] = dot * scale;
            block_max = fmax(block_max, probs[j]);
        }
        if (block_max > running_max) {
            float correction = exp(running_max - block_max);
            running_sum *= correction;
            for (int c = 0; c < chunks; c++) vstore8(vload8(c, acc) * correction, c, acc);
            for (int d = chunks * 8; d < head_dim; d++) acc[d] *= correction;
            running_max = block_max;
        }
        for (int j = 0; j < count; j++) {
            probs[j] = exp(probs[j] - running_max);
            running_sum += probs[j];
        }
        __global const uchar* vb = v_head + (size_t)p0 * v_position_bytes;
        for (int c = 0; c < chunks; c++) {
            float8 a = vload8(c, acc);
            for (int j = 0; j < count; j++) a += probs[j] * load8_v(vb + (size_t)j * v_position_bytes, c);
            vstore8(a, c, acc);
        }
        for (int d = chunks * 8; d < head_dim; d++) {
            float a = acc[d];
            for (int j = 0; j < count; j++) a += probs[j] * load_v(vb + (size_t)j * v_position_bytes, d);
            acc[d] = a;
        }
    }
    __global float* outr = out + ((size_t)r * heads + h) * head_dim;
    float inverse = 1.0f / running_sum;
    for (int d = 0; d < head_dim; d++) outr[d] = acc[d] * inverse;
}
