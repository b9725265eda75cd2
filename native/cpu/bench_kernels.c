/*
 * fscpu_bench: times the matmuls of every format on one thread, in every x86 variant this CPU runs: a 1024x3072
 * matrix (Qwen3-0.6B's ffn_down) and a 3072x1024 one (its ffn_gate and ffn_up) of random blocks against 1, 2, 3, 4,
 * 8 and 128 activation rows (decode, a scheduler's streams, a prefill call's rows) and a 151936x1024 one (lm_head)
 * against one, and checks each variant's outputs against the scalar variant's, bit for bit. Built on demand only:
 *   cmake -S native/cpu -B build/fscpu && cmake --build build/fscpu --target fscpu_bench && build/fscpu/fscpu_bench
 * Arguments: formats (e.g. "q6_k,q4_0", or "all"), then a number of activation rows to time that alone (ffn_down
 * and ffn_gate's shapes), then a matrix shape ROWSxK to time alone (e.g. 3072x1024: gate and up), then a number of
 * threads T to time the kernels (unpacked and x16) as a decode runs them instead: the matrix copied until the copies
 * exceed L3 (256 MiB), each pass over the next copy (from memory, as a model reads each matrix once per token), its
 * rows in units of 64 (NativeMatmul's), each of the T threads a contiguous range of them (WorkerPool's), wall time
 * (T = 1: CPU time).
 * Times are thread CPU time (with T > 1: wall time), best of 11, so other processes on a shared machine disturb them less.
 */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blocks.h"
#include "float_matmul.h"

typedef void (*matmul_fn)(const void *, int64_t, int, int, const void *, int, int, float *, int64_t);
typedef void (*quantize_fn)(const float *, void *, int64_t);
typedef void (*repacked_fn)(const void *, int, int, const void *, int, int, float *, int64_t);
typedef void (*repack_fn)(const void *, int64_t, int, int, int, void *);

struct format {
    const char *name;
    int elements, block_bytes, act_bytes, scale_offsets[2]; /* offsets of the block's f16 scales; -1: none */
    quantize_fn quantize;
    matmul_fn scalar, variants[3];
    repack_fn repack; /* Q4_K, Q4_0, Q8_0, Q6_K, Q2_K and Q3_K: their repacked form, timed as "F x16" beside the rows unpacked */
    repacked_fn repacked[3];
};

#if defined(__x86_64__)
static const char *variant_names[3] = {"avx2", "avx512", "avxvnni"};
#define FS_FORMAT(F, ELEMENTS, BLOCK, ACT, Q, D0, D1)                                                                \
    {#F, ELEMENTS, BLOCK, ACT, {D0, D1}, fs_quantize_##Q##_scalar, fs_matmul_##F##_scalar,                           \
     {fs_matmul_##F##_avx2, fs_matmul_##F##_avx512, fs_matmul_##F##_avxvnni}, NULL, {NULL, NULL, NULL}}
#define FS_REPACKED_FORMAT(F, ELEMENTS, BLOCK, ACT, Q, D0, D1)                                                       \
    {#F, ELEMENTS, BLOCK, ACT, {D0, D1}, fs_quantize_##Q##_scalar, fs_matmul_##F##_scalar,                           \
     {fs_matmul_##F##_avx2, fs_matmul_##F##_avx512, fs_matmul_##F##_avxvnni}, fs_repack_##F,                         \
     {fs_matmul_##F##_x16_avx2, fs_matmul_##F##_x16_avx512, fs_matmul_##F##_x16_avxvnni}}
#elif defined(__aarch64__)
static const char *variant_names[3] = {"neon", NULL, NULL};
#define FS_FORMAT(F, ELEMENTS, BLOCK, ACT, Q, D0, D1)                                                                \
    {#F, ELEMENTS, BLOCK, ACT, {D0, D1}, fs_quantize_##Q##_scalar, fs_matmul_##F##_scalar,                           \
     {fs_matmul_##F##_neon, NULL, NULL}, NULL, {NULL, NULL, NULL}}
#define FS_REPACKED_FORMAT(F, ELEMENTS, BLOCK, ACT, Q, D0, D1)                                                       \
    {#F, ELEMENTS, BLOCK, ACT, {D0, D1}, fs_quantize_##Q##_scalar, fs_matmul_##F##_scalar,                           \
     {fs_matmul_##F##_neon, NULL, NULL}, fs_repack_##F, {fs_matmul_##F##_x16_neon, NULL, NULL}}
#else
static const char *variant_names[3] = {NULL, NULL, NULL};
#define FS_FORMAT(F, ELEMENTS, BLOCK, ACT, Q, D0, D1)                                                                \
    {#F, ELEMENTS, BLOCK, ACT, {D0, D1}, fs_quantize_##Q##_scalar, fs_matmul_##F##_scalar, {NULL, NULL, NULL},     \
     NULL, {NULL, NULL, NULL}}
#define FS_REPACKED_FORMAT FS_FORMAT
#endif

#define FS_FLOAT_FORMAT(F, BYTES)                                                                                    \
    {#F, 1, BYTES, BYTES, {-1, -1}, fs_convert_##F##_scalar, fs_matmul_##F##_scalar, {FS_FLOAT_VARIANTS(F)}, NULL,   \
     {NULL, NULL, NULL}}
#if defined(__x86_64__)
#define FS_FLOAT_VARIANTS(F) fs_matmul_##F##_avx2, fs_matmul_##F##_avx512, fs_matmul_##F##_avxvnni
#elif defined(__aarch64__)
#define FS_FLOAT_VARIANTS(F) fs_matmul_##F##_neon, NULL, NULL
#else
#define FS_FLOAT_VARIANTS(F) NULL, NULL, NULL
#endif

static const struct format formats[] = {
    FS_REPACKED_FORMAT(q6_k, 256, 210, Q8_K_BYTES, q8_k, 208, -1), FS_REPACKED_FORMAT(q4_k, 256, 144, Q8_K_BYTES, q8_k, 0, 2),
    FS_REPACKED_FORMAT(q4_0, 32, 18, Q8_0_BYTES, q8_0, 0, -1), FS_REPACKED_FORMAT(q2_k, 256, 84, Q8_K_BYTES, q8_k, 80, 82),
    FS_REPACKED_FORMAT(q8_0, 32, 34, Q8_0_BYTES, q8_0, 0, -1), FS_FORMAT(q5_k, 256, 176, Q8_K_BYTES, q8_k, 0, 2),
    FS_REPACKED_FORMAT(q3_k, 256, 110, Q8_K_BYTES, q8_k, 108, -1), FS_FORMAT(iq2_xxs, 256, 66, Q8_K_BYTES, q8_k, 0, -1),
    /* The float matmuls: one value a block, activations converted to the weights' format (fs_convert_F_V). */
    FS_FLOAT_FORMAT(bf16, 2), FS_FLOAT_FORMAT(f16, 2), FS_FLOAT_FORMAT(f32, 4),
};

static uint64_t random_state = 88172645463325252ull;

static uint64_t next_random(void) {
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    return random_state;
}

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/*
 * Random bytes, with every f16 scale a finite normal half (about 2^-8..2^-6, either sign); float formats' values
 * uniform in ±0.1.
 */
static uint8_t *random_weights(const struct format *f, int64_t bytes) {
    uint8_t *w = malloc((size_t)bytes);
    if (f->elements == 1) {
        for (int64_t i = 0; i < bytes / f->block_bytes; i++) {
            float v = (float)((int64_t)(next_random() % 2000001) - 1000000) * 1e-7f;
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            uint16_t h = strcmp(f->name, "bf16") == 0 ? fm_float_to_bf16(u) : float_to_half(v);
            memcpy(w + i * f->block_bytes, f->block_bytes == 4 ? (const void *)&v : (const void *)&h, f->block_bytes);
        }
        return w;
    }
    for (int64_t i = 0; i < bytes; i++) w[i] = (uint8_t)next_random();
    for (int64_t b = 0; b < bytes / f->block_bytes; b++)
        for (int j = 0; j < 2; j++)
            if (f->scale_offsets[j] >= 0) {
                uint16_t h = (uint16_t)(0x1C00 + (next_random() & 0x7FF)) | (next_random() & 1 ? 0x8000 : 0);
                memcpy(w + b * f->block_bytes + f->scale_offsets[j], &h, sizeof h);
            }
    return w;
}

static void report(const char *format, const char *variant, int rows, int k, int act_rows, int64_t bytes,
                   double best, int same) {
    int64_t outs = (int64_t)rows * act_rows;
    printf("%-9s %-7s %6dx%-5d x%-3d %6.2f GB/s %6.1f Gmac/s %7.1f ns/row%s\n", format, variant, rows, k, act_rows,
           (double)bytes * act_rows / best * 1e-9, (double)outs * k / best * 1e-9, best / (double)outs * 1e9,
           same ? "" : "  DIFFERS FROM SCALAR");
}

#define UNIT_ROWS 64
#define MEMORY_BYTES (256LL << 20)

/*
 * A decode pass shared by threads: thread t runs the units of copy `copy` in its range, t/threads..(t+1)/threads of
 * them, through the unpacked kernel matmul or (where set) the repacked one.
 */
struct pass {
    matmul_fn matmul;
    repacked_fn repacked;
    const uint8_t *copies;
    int64_t row_bytes, bytes;
    int rows, k, act_rows, copy, stop, threads;
    const void *act;
    float *out;
    atomic_int next_thread;
    pthread_barrier_t start, done;
};

static void run_units(struct pass *p, int t) {
    const uint8_t *w = p->copies + (int64_t)p->copy * p->bytes;
    int units = (p->rows + UNIT_ROWS - 1) / UNIT_ROWS;
    for (int u = units * t / p->threads; u < units * (t + 1) / p->threads; u++) {
        int to = (u + 1) * UNIT_ROWS < p->rows ? (u + 1) * UNIT_ROWS : p->rows;
        if (p->repacked) p->repacked(w, u * UNIT_ROWS, to, p->act, p->act_rows, p->k, p->out, p->rows);
        else p->matmul(w, p->row_bytes, u * UNIT_ROWS, to, p->act, p->act_rows, p->k, p->out, p->rows);
    }
}

static void *pass_worker(void *arg) {
    struct pass *p = arg;
    int t = atomic_fetch_add(&p->next_thread, 1);
    for (;;) {
        pthread_barrier_wait(&p->start);
        if (p->stop) return NULL;
        run_units(p, t);
        pthread_barrier_wait(&p->done);
    }
}

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/*
 * Seconds a pass takes with the weights from memory (copies of w beyond L3) on `threads` threads, best of 11: wall
 * time, or on one thread its CPU time (as the other timings: less disturbed by other processes).
 */
static double time_from_memory(matmul_fn matmul, repacked_fn repacked, const uint8_t *w, int64_t bytes,
                               int64_t row_bytes, int rows, int k, const void *act, int act_rows, float *out,
                               int threads) {
    int copies = (int)((MEMORY_BYTES + bytes - 1) / bytes);
    if (copies < 2) copies = 2;
    uint8_t *all = malloc((size_t)(bytes * copies));
    for (int c = 0; c < copies; c++) memcpy(all + c * bytes, w, (size_t)bytes);
    struct pass p = {.matmul = matmul, .repacked = repacked, .copies = all, .row_bytes = row_bytes, .bytes = bytes,
                     .rows = rows, .k = k, .act_rows = act_rows, .act = act, .out = out, .threads = threads};
    atomic_store(&p.next_thread, 1);
    pthread_barrier_init(&p.start, NULL, (unsigned)threads);
    pthread_barrier_init(&p.done, NULL, (unsigned)threads);
    pthread_t workers[64];
    for (int t = 1; t < threads; t++) pthread_create(&workers[t], NULL, pass_worker, &p);
    double best = 1e9, (*seconds)(void) = threads == 1 ? cpu_seconds : wall_seconds;
    int pass = 0;
    for (int repeat = 0; repeat < 11; repeat++) {
        int n = 0;
        double start = seconds(), elapsed;
        do {
            p.copy = pass++ % copies;
            pthread_barrier_wait(&p.start);
            run_units(&p, 0);
            pthread_barrier_wait(&p.done);
            n++;
        } while ((elapsed = seconds() - start) < 0.05);
        if (elapsed / n < best) best = elapsed / n;
    }
    p.stop = 1;
    pthread_barrier_wait(&p.start);
    for (int t = 1; t < threads; t++) pthread_join(workers[t], NULL);
    pthread_barrier_destroy(&p.start);
    pthread_barrier_destroy(&p.done);
    free(all);
    return best;
}

/*
 * Times W·xᵀ for act_rows activation rows over a rows×k matrix on one thread, per variant (for Q4_K, Q4_0, Q8_0, Q6_K, Q2_K, Q3_K
 * also repacked, the x16 kernels), after checking every
 * output against the scalar variant's bit for bit (rows up to 4096 of the whole call, and an odd slice from row 1).
 * Prints the weights' bytes per second as read by one pass over every activation row (bytes·act_rows / time: the
 * decode figure for act_rows = 1) and the integer multiply-adds per second (rows·k·act_rows / time).
 */
static void bench(const struct format *f, int rows, int k, int act_rows, int threads) {
    int blocks = k / f->elements, check_rows = rows < 4096 ? rows : 4096;
    int act_block = f->elements == 1 ? 1 : f->act_bytes == Q8_0_BYTES ? 32 : 256;
    int64_t row_bytes = (int64_t)blocks * f->block_bytes, bytes = row_bytes * rows;
    int64_t act_row_bytes = (int64_t)(k / act_block) * f->act_bytes, outs = (int64_t)rows * act_rows;
    uint8_t *w = random_weights(f, bytes), *act = malloc((size_t)(act_row_bytes * act_rows));
    float *x = malloc(sizeof(float) * (size_t)k * (size_t)act_rows);
    float *expected = malloc(sizeof(float) * (size_t)outs), *out = malloc(sizeof(float) * (size_t)outs);
    for (int64_t i = 0; i < (int64_t)k * act_rows; i++)
        x[i] = (float)((int64_t)(next_random() % 2000001) - 1000000) * 1e-6f;
    f->quantize(x, act, (int64_t)k * act_rows);
    f->scalar(w, row_bytes, 0, check_rows, act, act_rows, k, expected, rows);
    for (int v = 0; v < 3; v++) {
        matmul_fn matmul = f->variants[v];
        if (!matmul || !fs_cpu_runs(variant_names[v])) continue;
        matmul(w, row_bytes, 0, rows, act, act_rows, k, out, rows);
        int same = 1;
        for (int r = 0; r < act_rows; r++)
            same &= memcmp(expected + (int64_t)r * rows, out + (int64_t)r * rows, sizeof(float) * (size_t)check_rows) == 0;
        memset(out, 0, sizeof(float) * (size_t)outs);
        matmul(w, row_bytes, 1, check_rows, act, act_rows, k, out, rows); /* an odd slice, not from row 0 */
        for (int r = 0; r < act_rows; r++) {
            const float *e = expected + (int64_t)r * rows, *o = out + (int64_t)r * rows;
            same &= o[0] == 0.0f && memcmp(e + 1, o + 1, sizeof(float) * (size_t)(check_rows - 1)) == 0;
        }
        double best = 1e9;
        if (threads > 0) {
            best = time_from_memory(matmul, NULL, w, bytes, row_bytes, rows, k, act, act_rows, out, threads);
            char name[24];
            snprintf(name, sizeof name, "%s %dt", variant_names[v], threads);
            report(f->name, name, rows, k, act_rows, bytes, best, same);
            continue;
        }
        for (int repeat = 0; repeat < 11; repeat++) {
            int n = 0;
            double start = cpu_seconds(), elapsed;
            do {
                matmul(w, row_bytes, 0, rows, act, act_rows, k, out, rows);
                n++;
            } while ((elapsed = cpu_seconds() - start) < 0.05);
            if (elapsed / n < best) best = elapsed / n;
        }
        report(f->name, variant_names[v], rows, k, act_rows, bytes, best, same);
    }
    if (f->repack) {
        /* The same weights repacked (rows is a multiple of 16), checked against the scalar kernel unpacked. */
        uint8_t *packed = malloc((size_t)fs_repacked_bytes(f->name, rows, k));
        f->repack(w, row_bytes, 0, rows / 16, k, packed);
        char name[16];
        snprintf(name, sizeof name, "%s x16", f->name);
        for (int v = 0; v < 3; v++) {
            repacked_fn matmul = f->repacked[v];
            if (!matmul || !fs_cpu_runs(variant_names[v])) continue;
            memset(out, 0, sizeof(float) * (size_t)outs);
            matmul(packed, 0, rows, act, act_rows, k, out, rows);
            int same = 1;
            for (int r = 0; r < act_rows; r++)
                same &= memcmp(expected + (int64_t)r * rows, out + (int64_t)r * rows, sizeof(float) * (size_t)check_rows) == 0;
            double best = 1e9;
            if (threads > 0) {
                best = time_from_memory(NULL, matmul, packed, fs_repacked_bytes(f->name, rows, k), 0, rows, k, act,
                                        act_rows, out, threads);
                char variant[24];
                snprintf(variant, sizeof variant, "%s %dt", variant_names[v], threads);
                report(name, variant, rows, k, act_rows, bytes, best, same);
                continue;
            }
            for (int repeat = 0; repeat < 11; repeat++) {
                int n = 0;
                double start = cpu_seconds(), elapsed;
                do {
                    matmul(packed, 0, rows, act, act_rows, k, out, rows);
                    n++;
                } while ((elapsed = cpu_seconds() - start) < 0.05);
                if (elapsed / n < best) best = elapsed / n;
            }
            report(name, variant_names[v], rows, k, act_rows, bytes, best, same);
        }
        free(packed);
    }
    free(w);
    free(act);
    free(x);
    free(expected);
    free(out);
}

/* Whether name is one of the comma-separated names in list. */
static int listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *at = list; (at = strstr(at, name)) != NULL; at += n) {
        if ((at == list || at[-1] == ',') && (at[n] == ',' || at[n] == '\0')) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 && strcmp(argv[1], "all") != 0 ? argv[1] : NULL; /* "q6_k,q4_0": those alone */
    /* A second argument, e.g. "4": that many activation rows alone, without the lm_head decode. */
    int only_rows = argc > 2 ? atoi(argv[2]) : 0, act_rows[] = {1, 2, 3, 4, 8, 128};
    if (only_rows > 0) act_rows[0] = only_rows;
    /* A third, e.g. "3072x1024": that matrix alone (rows a multiple of 16, k of 256) instead of both FFN shapes. */
    int rows = 1024, k = 3072;
    if (argc > 3 && (sscanf(argv[3], "%dx%d", &rows, &k) != 2 || rows <= 0 || rows % 16 || k <= 0 || k % 256)) {
        fprintf(stderr, "fscpu_bench: %s is no shape ROWSxK (rows a multiple of 16, k of 256)\n", argv[3]);
        return 2;
    }
    /* A fourth, e.g. "2": the kernels (unpacked and x16) from memory on that many threads (above). */
    int threads = argc > 4 ? atoi(argv[4]) : 0;
    if (argc > 4 && (threads < 1 || threads > 64)) {
        fprintf(stderr, "fscpu_bench: %s is no number of threads (1..64)\n", argv[4]);
        return 2;
    }
    size_t shapes = only_rows > 0 ? 1 : sizeof act_rows / sizeof *act_rows;
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        if (only && !listed(only, formats[i].name)) continue;
        for (size_t r = 0; r < shapes; r++) {
            if (argc > 3) {
                bench(&formats[i], rows, k, act_rows[r], threads);
            } else {
                bench(&formats[i], 1024, 3072, act_rows[r], 0);
                bench(&formats[i], 3072, 1024, act_rows[r], 0);
            }
        }
        if (!only_rows) bench(&formats[i], 151936, 1024, 1, 0);
    }
    return 0;
}
