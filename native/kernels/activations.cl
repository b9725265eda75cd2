// Kernels on float32 activations (no weights, no KV cache: kv_cache.cl). Row r of a forward sits at
// row_positions[r]: .x its position, .y its sequence.

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
