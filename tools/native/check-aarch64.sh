#!/usr/bin/env bash
# Cross-builds libfscpu (native/cpu) for aarch64 Linux and runs fscpu_check under qemu-aarch64: the neon variant
# against the scalar one, bit for bit, on a CPU with the dot product extension (-cpu max), and the CPU detection on
# one without it (-cpu cortex-a53: fs_cpu_isa must say scalar, and neon must not run). Needs CMake and, on Debian
# or Ubuntu, `apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user`.
#   tools/native/check-aarch64.sh [build dir, default build/fscpu-aarch64]
# Also `... && qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu <build dir>/fscpu_bench` (several minutes under qemu,
# its times meaningless there) checks the benchmark's formats on its larger matrices.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/fscpu-aarch64}
sysroot=/usr/aarch64-linux-gnu
for tool in cmake aarch64-linux-gnu-gcc qemu-aarch64; do
    command -v "$tool" > /dev/null || { echo "check-aarch64: no $tool (see the top of $0)" >&2; exit 1; }
done
cmake -S "$root/native/cpu" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" > /dev/null
cmake --build "$build" --target fscpu fscpu_check fscpu_bench > /dev/null
qemu-aarch64 -cpu max -L "$sysroot" "$build/fscpu_check" neon
qemu-aarch64 -cpu cortex-a53 -L "$sysroot" "$build/fscpu_check" scalar
echo "check-aarch64: the neon variant as scalar, bit for bit; detection right with and without dotprod"
