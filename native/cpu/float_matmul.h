/*
 * What the float matmuls (BF16, F16 and F32 weights) of every variant share: the order of their float operations
 * (native/cpu/README.md, "Float matmuls"), which each variant computes bit for bit.
 *
 * BF16: a dot product of k values keeps one chain of 16 float lanes, +0 at first. The values go in chunks of 32 (16
 * pairs: one 512-bit vdpbf16ps), the last chunk padded with zeros; lane l takes the chunk's pair 2l, 2l + 1, the odd
 * product first (vdpbf16ps's order), each product added with one rounding and bf16 denormals read as zero, results
 * below 2^-126 flushed to zero after rounding (the instruction's DAZ and FTZ). One chain, not several, so that a
 * kernel's registers hold tiles of weight rows × activation rows (each chunk loaded once for many dots), whose dots
 * give it the independent chains the instruction's latency needs. Then the 16 lanes are summed as fm_sum_lanes.
 *
 * F16 and F32: 4 chains of 16 float lanes, all +0, chunks of 16 values, chunk c into chain c % 4, the last padded
 * with zeros; lane l takes value l, acc = fmaf(w, x, acc). Then the chains are summed lane by lane as
 * (c0 + c1) + (c2 + c3), and the 16 lanes as fm_sum_lanes.
 */
#ifndef FLOAT_MATMUL_H
#define FLOAT_MATMUL_H

#define FM_LANES 16
#define FM_CHAINS 4 /* F16 and F32 */
#define FM_BF16_CHUNK 32
#define FM_HALF_CHUNK 16 /* F16 and F32 */

/* The 16 lanes summed: halves added, then (0+4, 1+5, 2+6, 3+7) paired as (w0 + w2) + (w1 + w3). */
static inline float fm_sum_lanes(const float *a) {
    float h[8];
    for (int i = 0; i < 8; i++) h[i] = a[i] + a[i + 8];
    float w0 = h[0] + h[4], w1 = h[1] + h[5], w2 = h[2] + h[6], w3 = h[3] + h[7];
    return (w0 + w2) + (w1 + w3);
}

/* The four chains of 16 lanes into one float: (c0 + c1) + (c2 + c3) per lane, then the lanes. */
static inline float fm_sum_chains(const float *chains) {
    float v[FM_LANES];
    for (int l = 0; l < FM_LANES; l++) {
        v[l] = (chains[l] + chains[FM_LANES + l]) + (chains[2 * FM_LANES + l] + chains[3 * FM_LANES + l]);
    }
    return fm_sum_lanes(v);
}

/* ggml's fp32 -> bf16: round to nearest, ties to even; a NaN stays a NaN (quiet). */
static inline uint16_t fm_float_to_bf16(uint32_t u) {
    if ((u & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((u >> 16) | 64);
    return (uint16_t)((u + (0x7FFF + ((u >> 16) & 1))) >> 16);
}

#endif
