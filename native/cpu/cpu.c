/*
 * Which variants this CPU runs: on x86 by CPUID (GCC's and Clang's __builtin_cpu_supports, which also check that
 * the OS saves the AVX and AVX-512 registers), on aarch64 Linux by the kernel's hardware capabilities (HWCAP_ASIMDDP:
 * the dot product instructions). The caller picks the variant; nothing here keeps state.
 */
#include <string.h>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "blocks.h"

FS_API int fs_cpu_runs(const char *isa) {
    if (strcmp(isa, "scalar") == 0) return 1;
#if defined(__x86_64__)
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    if (strcmp(isa, "avx2") == 0) return avx2;
    if (strcmp(isa, "avxvnni") == 0) return avx2 && __builtin_cpu_supports("avxvnni");
    if (strcmp(isa, "avx512") == 0) {
        return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    }
#endif
#if defined(__aarch64__) && defined(__linux__)
    if (strcmp(isa, "neon") == 0) return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
    return 0;
}

FS_API int fs_activation_bytes(const char *format) {
    if (strcmp(format, "q8_0") == 0) return FS_Q8_0_BYTES;
    if (strcmp(format, "q8_k") == 0) return FS_Q8_K_BYTES;
    if (strcmp(format, "bf16") == 0 || strcmp(format, "f16") == 0) return 2; /* the float matmuls' conversions */
    if (strcmp(format, "f32") == 0) return 4;
    return 0;
}

FS_API int fs_block_bytes(const char *format) {
    static const struct {
        const char *name;
        int bytes;
    } blocks[] = {
        {"q8_0", Q8_0_BLOCK}, {"q4_0", Q4_0_BLOCK}, {"q4_k", Q4_K_BLOCK}, {"q6_k", Q6_K_BLOCK},
        {"q5_k", Q5_K_BLOCK}, {"q2_k", Q2_K_BLOCK}, {"q3_k", Q3_K_BLOCK}, {"iq2_xxs", IQ2_XXS_BLOCK},
        {"bf16", 2},          {"f16", 2},          {"f32", 4}, /* the float matmuls: one value a block */
    };
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        if (strcmp(format, blocks[i].name) == 0) return blocks[i].bytes;
    }
    return 0;
}

FS_API const char *fs_cpu_isa(void) {
    if (fs_cpu_runs("avx512")) return "avx512";
    if (fs_cpu_runs("avxvnni")) return "avxvnni";
    if (fs_cpu_runs("avx2")) return "avx2";
    if (fs_cpu_runs("neon")) return "neon";
    return "scalar";
}
