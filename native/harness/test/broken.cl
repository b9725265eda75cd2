// Test kernel for clrun that must fail to build: clrun has to exit non-zero and show the build log.
__kernel void broken(__global float *out) {
    out[get_global_id(0)] = undeclared_value_in_broken_kernel;
}
