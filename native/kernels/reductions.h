// Reductions shared by the kernel files (#include "reductions.h": the OpenCL backend inlines it from the classpath,
// clrun finds it through -I).
#ifndef FS_REDUCTIONS_H
#define FS_REDUCTIONS_H

static float sum8(float8 v) {
    float4 a = v.lo + v.hi;
    return (a.x + a.y) + (a.z + a.w);
}

static float sum16(float16 v) {
    return sum8(v.lo + v.hi);
}

// Tree reductions of one value per work-item over the work-group (size a power of two); every work-item gets the
// result and must call them.
static float local_max(__local float* scratch, float value) {
    int lid = get_local_id(0);
    scratch[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int half_size = get_local_size(0) / 2; half_size > 0; half_size >>= 1) {
        if (lid < half_size) scratch[lid] = fmax(scratch[lid], scratch[lid + half_size]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float result = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return result;
}

static float local_sum(__local float* scratch, float value) {
    int lid = get_local_id(0);
    scratch[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int half_size = get_local_size(0) / 2; half_size > 0; half_size >>= 1) {
        if (lid < half_size) scratch[lid] += scratch[lid + half_size];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float result = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return result;
}

#endif
