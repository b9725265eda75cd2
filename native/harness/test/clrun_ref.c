/*
 * clrun_ref: the independent side of clrun's tests. It writes deterministic inputs, computes expected outputs on the
 * CPU in double precision, and compares a kernel's output with them. Files are raw little-endian arrays.
 *
 *   clrun_ref gen f32|bf16 COUNT SEED PATH       uniform values in [-1, 1)
 *   clrun_ref saxpy ALPHA X Y OUT                out = ALPHA * x + y            (f32)
 *   clrun_ref matvec_bf16 ROWS COLS W X OUT      out = W x, W bf16 [ROWS][COLS] (x, out f32)
 *   clrun_ref compare ACTUAL EXPECTED RTOL ATOL  f32 arrays: |a - e| <= ATOL + RTOL * |e| everywhere
 *
 * To test another kernel, add a reference command here and a clrun_test() call in cmake/CMakeLists.txt.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *message, const char *detail) {
    fprintf(stderr, "clrun_ref: %s%s\n", message, detail);
    exit(1);
}

static void *read_array(const char *path, size_t element_size, size_t *count) {
    FILE *file = fopen(path, "rb");
    if (!file) die("cannot read ", path);
    fseek(file, 0, SEEK_END);
    long bytes = ftell(file);
    rewind(file);
    if (bytes <= 0 || bytes % (long)element_size) die("empty or ragged array file: ", path);
    void *data = malloc((size_t)bytes);
    if (!data || fread(data, 1, (size_t)bytes, file) != (size_t)bytes) die("short read: ", path);
    fclose(file);
    *count = (size_t)bytes / element_size;
    return data;
}

static void write_array(const char *path, const void *data, size_t bytes) {
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(data, 1, bytes, file) != bytes || fclose(file)) die("cannot write ", path);
}

static double number(const char *text) {
    char *end;
    double value = strtod(text, &end);
    if (end == text || *end) die("not a number: ", text);
    return value;
}

/* Round-to-nearest-even truncation of an f32 to its top 16 bits (inputs here are finite). */
static uint16_t float_to_bf16(float value) {
    uint32_t bits;
    memcpy(&bits, &value, 4);
    return (uint16_t)((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

static double bf16_to_double(uint16_t bits) {
    uint32_t wide = (uint32_t)bits << 16;
    float value;
    memcpy(&value, &wide, 4);
    return value;
}

static void gen(const char *type, size_t count, uint64_t seed, const char *path) {
    int bf16 = !strcmp(type, "bf16");
    if (!bf16 && strcmp(type, "f32")) die("gen: type must be f32 or bf16, not ", type);
    size_t element = bf16 ? 2 : 4;
    unsigned char *data = malloc(count * element);
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < count; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17; /* xorshift64 */
        float value = (float)((double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        if (bf16) {
            uint16_t half = float_to_bf16(value);
            memcpy(data + i * 2, &half, 2);
        } else {
            memcpy(data + i * 4, &value, 4);
        }
    }
    write_array(path, data, count * element);
    free(data);
}

static void saxpy(double alpha, const char *x_path, const char *y_path, const char *out_path) {
    size_t n, ny;
    float *x = read_array(x_path, 4, &n), *y = read_array(y_path, 4, &ny);
    if (n != ny) die("saxpy: x and y differ in length: ", y_path);
    for (size_t i = 0; i < n; i++) y[i] = (float)(alpha * x[i] + y[i]);
    write_array(out_path, y, n * 4);
}

static void matvec_bf16(size_t rows, size_t cols, const char *w_path, const char *x_path, const char *out_path) {
    size_t w_count, x_count;
    uint16_t *w = read_array(w_path, 2, &w_count);
    float *x = read_array(x_path, 4, &x_count);
    if (w_count != rows * cols || x_count != cols) die("matvec_bf16: sizes do not match ROWS and COLS: ", w_path);
    float *out = malloc(rows * 4);
    for (size_t r = 0; r < rows; r++) {
        double sum = 0;
        for (size_t c = 0; c < cols; c++) sum += bf16_to_double(w[r * cols + c]) * x[c];
        out[r] = (float)sum;
    }
    write_array(out_path, out, rows * 4);
}

static int compare(const char *actual_path, const char *expected_path, double rtol, double atol) {
    size_t n, expected_n;
    float *actual = read_array(actual_path, 4, &n), *expected = read_array(expected_path, 4, &expected_n);
    if (n != expected_n) die("compare: lengths differ: ", actual_path);
    size_t bad = 0, worst = 0;
    double worst_excess = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double error = fabs((double)actual[i] - expected[i]), allowed = atol + rtol * fabs(expected[i]);
        double excess = isnan(error) ? INFINITY : error - allowed; /* NaN counts as a mismatch */
        if (excess > 0) bad++;
        if (excess > worst_excess) worst_excess = excess, worst = i;
    }
    printf("compare %s with %s: %zu values, %zu outside |a-e| <= %g + %g|e|; worst at [%zu]: %.9g vs %.9g\n",
           actual_path, expected_path, n, bad, atol, rtol, worst, actual[worst], expected[worst]);
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    const char *command = argc > 1 ? argv[1] : "";
    if (!strcmp(command, "gen") && argc == 6)
        gen(argv[2], (size_t)number(argv[3]), (uint64_t)number(argv[4]), argv[5]);
    else if (!strcmp(command, "saxpy") && argc == 6)
        saxpy(number(argv[2]), argv[3], argv[4], argv[5]);
    else if (!strcmp(command, "matvec_bf16") && argc == 7)
        matvec_bf16((size_t)number(argv[2]), (size_t)number(argv[3]), argv[4], argv[5], argv[6]);
    else if (!strcmp(command, "compare") && argc == 6)
        return compare(argv[2], argv[3], number(argv[4]), number(argv[5]));
    else
        die("usage: gen|saxpy|matvec_bf16|compare ... (see the comment at the top of clrun_ref.c)", "");
    return 0;
}
