// Kernels on float32 activations and the float32 KV cache (no weights). Cache layout per layer:
// [sequence][position][kv_dim], context_length positions per sequence. Row r of a forward sits at row_positions[r]:
// .x its position, .y its sequence. The sizes shared with the launches come as -D defines (KernelConstants).

#if !defined(ATTENTION_DIMS_PER_ITEM) || !defined(MAX_HEAD_DIM)
#error "build with KernelConstants' defines: ATTENTION_DIMS_PER_ITEM and MAX_HEAD_DIM"
#endif

#include "reductions.h"

// Rotate-half RoPE in place (GPU design); global size (head_dim / 2, heads, rows). inv_freq[i] is the angle per
// position of pair i (theta^(-2i / head_dim) for plain RoPE); cos and sin are multiplied by attention_factor (YaRN's
// magnitude correction; 1, an exact no-op, for plain RoPE).
__kernel void rope_gpu(__global float* x, __global const float* inv_freq, __global const int2* row_positions,
                       int heads, int head_dim, float attention_factor) {
    int i = get_global_id(0);
    int half_dim = head_dim / 2;
    if (i >= half_dim) return;
    size_t h = get_global_id(1);
    size_t r = get_global_id(2);
    float angle = (float)row_positions[r].x * inv_freq[i];
    float c = cos(angle) * attention_factor;
    float s = sin(angle) * attention_factor;
    __global float* p = x + (r * heads + h) * head_dim;
    float a = p[i];
    float b = p[i + half_dim];
    p[i] = a * c - b * s;
    p[i + half_dim] = b * c + a * s;
}

// CPU design: work-item r rotates every head of row r, so each angle's cos and sin are computed once per row, not
// once per head; global size rows.
__kernel void rope_cpu(__global float* x, __global const float* inv_freq, __global const int2* row_positions,
                       int heads, int head_dim, float attention_factor) {
    size_t r = get_global_id(0);
    int half_dim = head_dim / 2;
    float position = (float)row_positions[r].x;
    __global float* row = x + r * heads * head_dim;
    for (int i = 0; i < half_dim; i++) {
        float angle = position * inv_freq[i];
        float c = cos(angle) * attention_factor;
        float s = sin(angle) * attention_factor;
        for (int h = 0; h < heads; h++) {
            __global float* p = row + h * head_dim;
            float a = p[i];
            float b = p[i + half_dim];
            p[i] = a * c - b * s;
            p[i + half_dim] = b * c + a * s;
        }
    }
}

// Element d of row r's k and v goes to (its sequence, its position, d) of the caches, keys and values in one launch;
// global size rows * kv_dim (= length).
__kernel void store_kv(__global const float* k, __global const float* v, __global float* k_cache,
                       __global float* v_cache, __global const int2* row_positions, int kv_dim, int context_length,
                       int length) {
    size_t i = get_global_id(0);
    if (i >= (size_t)length) return;
    size_t r = i / kv_dim;
    int2 at = row_positions[r];
    size_t dst = ((size_t)at.y * context_length + at.x) * kv_dim + i % kv_dim;
    k_cache[dst] = k[i];
    v_cache[dst] = v[i];
}

// Causal GQA, one work-group of L work-items per (head, row), over chunks of L positions with an online softmax:
// - scores: work-item t scores position p0 + t (q staged in local memory); one max reduction per chunk; each work-item
//   keeps the running sum of its own probabilities, reduced once at the end;
// - values: the work-group is split into L / lanes slices of lanes = min(head_dim, L) work-items; slice s adds the
//   positions s, s + slices, ... of the chunk, lane l owns dims l, l + lanes, ... (at most ATTENTION_DIMS_PER_ITEM), so
//   consecutive work-items read consecutive floats of a value row; the slices' accumulators are summed at the end.
__kernel void attention_gpu(__global const float* q, __global const float* k_cache, __global const float* v_cache,
                            __global float* out, __global const int2* row_positions, int heads, int kv_heads,
                            int head_dim, int context_length, float scale, __local float* qs, __local float* probs,
                            __local float* scratch) {
    int h = get_group_id(0);
    int r = get_group_id(1);
    int lid = get_local_id(0);
    int size = get_local_size(0);
    int kv_dim = kv_heads * head_dim;
    int2 at = row_positions[r];
    size_t kv_base = (size_t)at.y * context_length * kv_dim + (size_t)(h / (heads / kv_heads)) * head_dim;
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
            __global const float* kr = k_cache + (size_t)p * kv_dim + kv_base;
            float dot = 0.0f;
            for (int d = 0; d < head_dim; d++) dot += qs[d] * kr[d];
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
            __global const float* vb = v_cache + (size_t)p0 * kv_dim + kv_base;
            for (int j = 0; j < dims; j++) {
                int d = lane + j * lanes;
                if (d >= head_dim) break;
                float a = acc[j] * correction;
                for (int t = slice; t < count; t += slices) a += probs[t] * vb[(size_t)t * kv_dim + d];
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
__kernel void attention_cpu(__global const float* q, __global const float* k_cache, __global const float* v_cache,
                            __global float* out, __global const int2* row_positions, int heads, int kv_heads,
                            int head_dim, int context_length, float scale) {
    int h = get_global_id(0);
    int r = get_global_id(1);
    int kv_dim = kv_heads * head_dim;
    int2 at = row_positions[r];
    size_t kv_base = (size_t)at.y * context_length * kv_dim + (size_t)(h / (heads / kv_heads)) * head_dim;
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
            __global const float* kr = k_cache + (size_t)(p0 + j) * kv_dim + kv_base;
            float8 dots = 0.0f;
            for (int c = 0; c < chunks; c++) dots += vload8(c, qr) * vload8(c, kr);
            float dot = sum8(dots);
            for (int d = chunks * 8; d < head_dim; d++) dot += qr[d] * kr[d];
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
        __global const float* vb = v_cache + (size_t)p0 * kv_dim + kv_base;
        for (int c = 0; c < chunks; c++) {
            float8 a = vload8(c, acc);
            for (int j = 0; j < count; j++) a += probs[j] * vload8(c, vb + (size_t)j * kv_dim);
            vstore8(a, c, acc);
        }
        for (int d = chunks * 8; d < head_dim; d++) {
            float a = acc[d];
            for (int j = 0; j < count; j++) a += probs[j] * vb[(size_t)j * kv_dim + d];
            acc[d] = a;
        }
    }
    __global float* outr = out + ((size_t)r * heads + h) * head_dim;
    float inverse = 1.0f / running_sum;
    for (int d = 0; d < head_dim; d++) outr[d] = acc[d] * inverse;
}

__kernel void silu_mul(__global const float* gate, __global const float* up, __global float* out, long length) {
    size_t i = get_global_id(0);
    if (i >= (size_t)length) return;
    float g = gate[i];
    out[i] = g / (1.0f + exp(-g)) * up[i];
}

__kernel void add(__global float* x, __global const float* y, long length) {
    size_t i = get_global_id(0);
    if (i < (size_t)length) x[i] += y[i];
}

// Row r of out is the weighted sum of its `used` slots' rows (slots r * used .. r * used + used - 1), in slot order,
// starting from zero, each product rounded to float before it is added (no fma), as the CPU backend sums them, so that
// both agree bit for bit; global size (width, rows).
__kernel void sum_experts(__global const float* slots, __global const float* weights, __global float* out, int used,
                          int width) {
#pragma OPENCL FP_CONTRACT OFF
    size_t i = get_global_id(0);
    size_t r = get_global_id(1);
    float sum = 0.0f;
    for (int j = 0; j < used; j++) {
        size_t s = r * used + j;
        float product = weights[s] * slots[s * width + i];
        sum += product;
    }
    out[r * width + i] = sum;
}

// One work-group: strided scan per work-item, then a local reduction that keeps the lowest index on ties.
__kernel void argmax(__global const float* x, long offset, int length, __global int* result, __local float* values,
                     __local int* indices) {
    int lid = get_local_id(0);
    int size = get_local_size(0);
    float best = -INFINITY;
    int best_index = length;
    for (int i = lid; i < length; i += size) {
        float v = x[offset + i];
        if (best_index == length || v > best) {
            best = v;
            best_index = i;
        }
    }
    values[lid] = best;
    indices[lid] = best_index;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int half_size = size / 2; half_size > 0; half_size >>= 1) {
        if (lid < half_size) {
            float other = values[lid + half_size];
            int other_index = indices[lid + half_size];
            if (other_index < length && (indices[lid] == length || other > values[lid]
                    || (other == values[lid] && other_index < indices[lid]))) {
                values[lid] = other;
                indices[lid] = other_index;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) result[0] = indices[0];
}
