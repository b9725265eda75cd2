// Memory read bandwidth: T threads each sum their share of a 1 GiB buffer; best of 10 passes. Decode speed of a
// model is bounded by this figure (weights bytes / bandwidth), so benchmarks quote it.
//   cc -O2 -march=native -pthread tools/peer/bandwidth.c -o /tmp/bandwidth && /tmp/bandwidth 1 && /tmp/bandwidth 2
// The loads are GCC/Clang vector extensions of 64 bytes, which the compiler splits into the machine's widest loads
// (one AVX-512 load, two AVX2 or four SSE2/NEON ones): the same source for every x86 and ARM machine.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUFFER_BYTES (1UL << 30)
#define PASSES 10

typedef int64_t line __attribute__((vector_size(64)));

struct share { const line *begin; size_t count; pthread_barrier_t *start; long long sink; };

static void *read_share(void *arg) {
    struct share *s = arg;
    pthread_barrier_wait(s->start);
    // Four accumulators keep several loads in flight; the sum is kept so the loads cannot be optimised away.
    line a = {0}, b = a, c = a, d = a;
    for (size_t i = 0; i + 4 <= s->count; i += 4) {
        a += s->begin[i];
        b += s->begin[i + 1];
        c += s->begin[i + 2];
        d += s->begin[i + 3];
    }
    line sum = a + b + c + d;
    s->sink = 0;
    for (int lane = 0; lane < 8; lane++) s->sink += sum[lane];
    return NULL;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    if (threads < 1 || threads > 64) { fprintf(stderr, "usage: bandwidth [THREADS 1..64]\n"); return 1; }
    line *buffer = aligned_alloc(64, BUFFER_BYTES);
    if (!buffer) { fprintf(stderr, "bandwidth: cannot allocate 1 GiB\n"); return 1; }
    memset(buffer, 1, BUFFER_BYTES);  // fault every page in before timing
    size_t vectors = BUFFER_BYTES / sizeof(line), per_thread = vectors / threads;
    double best = 1e30;
    long long checksum = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, threads + 1);
        pthread_t ids[64];
        struct share shares[64];
        for (int t = 0; t < threads; t++) {
            shares[t] = (struct share){buffer + t * per_thread, per_thread, &start, 0};
            pthread_create(&ids[t], NULL, read_share, &shares[t]);
        }
        double t0 = now();
        pthread_barrier_wait(&start);
        for (int t = 0; t < threads; t++) { pthread_join(ids[t], NULL); checksum += shares[t].sink; }
        double seconds = now() - t0;
        if (seconds < best) best = seconds;
        pthread_barrier_destroy(&start);
    }
    double bytes = (double) per_thread * threads * sizeof(line);
    printf("{\"threads\": %d, \"read_gb_s\": %.1f, \"checksum\": %lld}\n", threads, bytes / best / 1e9, checksum);
    free(buffer);
    return 0;
}
