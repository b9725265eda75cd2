// Float32 FMA peak: T threads each run 12 independent chains of 512-bit FMAs (enough to cover the FMA latency on
// both FMA ports) and report the total rate. Prefill in float32 cannot beat this figure, so benchmarks quote it.
//   gcc -O2 -mavx512f -mfma -pthread tools/peer/fma_peak.c -o /tmp/fma_peak && /tmp/fma_peak 1 && /tmp/fma_peak 2
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEPS 400000000L
#define CHAINS 12

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *chains(void *result) {
    // Distinct starting values, or the compiler folds identical chains into one.
    __m512 a0 = _mm512_set1_ps(1), a1 = _mm512_set1_ps(2), a2 = _mm512_set1_ps(3), a3 = _mm512_set1_ps(4);
    __m512 a4 = _mm512_set1_ps(5), a5 = _mm512_set1_ps(6), a6 = _mm512_set1_ps(7), a7 = _mm512_set1_ps(8);
    __m512 a8 = _mm512_set1_ps(9), a9 = _mm512_set1_ps(10), a10 = _mm512_set1_ps(11), a11 = _mm512_set1_ps(12);
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (long i = 0; i < STEPS; i++) {
        a0 = _mm512_fmadd_ps(a0, m, c); a1 = _mm512_fmadd_ps(a1, m, c); a2 = _mm512_fmadd_ps(a2, m, c);
        a3 = _mm512_fmadd_ps(a3, m, c); a4 = _mm512_fmadd_ps(a4, m, c); a5 = _mm512_fmadd_ps(a5, m, c);
        a6 = _mm512_fmadd_ps(a6, m, c); a7 = _mm512_fmadd_ps(a7, m, c); a8 = _mm512_fmadd_ps(a8, m, c);
        a9 = _mm512_fmadd_ps(a9, m, c); a10 = _mm512_fmadd_ps(a10, m, c); a11 = _mm512_fmadd_ps(a11, m, c);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    *(float *) result = _mm512_reduce_add_ps(s);  // kept, so the chains cannot be optimised away
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "usage: fma_peak [THREADS 1..64]\n");
        return 2;
    }
    pthread_t ids[64];
    float results[64];
    double start = seconds();
    for (int t = 0; t < threads; t++) pthread_create(&ids[t], NULL, chains, &results[t]);
    for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
    double flops = (double) threads * STEPS * CHAINS * 16 * 2;
    printf("{\"threads\": %d, \"fp32_gflop_s\": %.1f, \"checksum\": %.3f}\n", threads, flops / (seconds() - start) / 1e9,
           results[0]);
    return 0;
}
