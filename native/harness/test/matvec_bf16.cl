// Test kernel for clrun: out = W x with W bf16 [rows][cols] and x, out f32 (exercises local memory, int arguments and
// --local). One work-group per row; each work-item sums a strided slice, then the group reduces in local memory.
// The work-group size must be a power of two.

float bf16_to_float(ushort bits) {
    return as_float((uint)bits << 16);
}

__kernel void matvec_bf16(__global const ushort *w, __global const float *x, __global float *out,
                          __local float *partial, int cols) {
    int row = get_group_id(0);
    int lid = get_local_id(0);
    int size = get_local_size(0);
    __global const ushort *w_row = w + (size_t)row * cols;
    float sum = 0.0f;
    for (int c = lid; c < cols; c += size) sum += bf16_to_float(w_row[c]) * x[c];
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = size / 2; stride > 0; stride /= 2) {
        if (lid < stride) partial[lid] += partial[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[row] = partial[0];
}
