// Test kernel for clrun: y = alpha * x + y, in place (exercises float, uint, buf:in and buf:inout arguments).
__kernel void saxpy(float alpha, __global const float *x, __global float *y, uint n) {
    uint i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i] + y[i];
}
