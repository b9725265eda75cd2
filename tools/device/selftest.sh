#!/usr/bin/env bash
# Runs run-on-device.sh here with the bundled ICD loader pointed at PoCL instead of NVIDIA's driver, and checks what a
# device call would bring back: the whole script, the jlinked runtime and the bundle, exercised end to end. It makes
# device-bundle/ first (prepare.sh) when that is missing or older than fs.jar. The split steps run too
# (FS_DEVICE_SPLIT=1). About a minute on 2 cores, plus prepare.sh's few minutes; not in `mvn verify`, which builds no
# jlink image.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ ! -f "$root/device-bundle/runtime.tar.xz" || "$root/cli/target/fs.jar" -nt "$root/device-bundle/app/fs.jar" ]]; then
  bash "$root/tools/device/prepare.sh"
fi
out="$(mktemp -d)"
ld="$(mktemp -d)"
trap 'rm -rf "$out" "$ld"' EXIT
failures=0
check() {  # check WHAT CONDITION…
  local what="$1"
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
has() { grep -qE -- "$2" "$out/$1"; }
step_exit() { grep -qE "^\| $1 \| $2 \|" "$out/summary.md"; }

rc=0
# The dynamic linker's own log (one file per process) says which libOpenCL.so.1 fs loaded: this machine has a system
# one too, which the bundled one must shadow.
OUT="$out" FS_DEVICE_ICD=pocl FS_DEVICE_FULL=0 FS_DEVICE_SPLIT=1 LD_DEBUG=libs LD_DEBUG_OUTPUT="$ld/ld" bash "$root/tools/device/run-on-device.sh" >/dev/null 2>&1 || rc=$?
check "run-on-device.sh exits 0 (got $rc)" test "$rc" = 0
files="$(find "$out" -type f | wc -l)"
check "at most 8 files come back (got $files)" test "$files" -le 8
check "every file name is one the device tool returns" \
  test -z "$(find "$out" -mindepth 1 -printf '%f\n' | grep -v '^[A-Za-z0-9._-]*$' || true)"
for f in summary.md run.log system.txt devices.txt verify.txt bench.txt; do check "$f is written" test -s "$out/$f"; done
check "fs ran on the jlinked runtime from the bundle" has devices.txt '/runtime/bin/java .*-jar .*/device-bundle/app/fs\.jar --version'
check "fs --version answered" has devices.txt '^fs [0-9]'
check "fs loaded the bundle's libOpenCL.so.1" \
  bash -c "grep -qh 'calling init: .*/device-bundle/lib/libOpenCL.so.1' '$ld'/ld.* && ! grep -h 'calling init: .*libOpenCL' '$ld'/ld.* | grep -qv /device-bundle/"
check "the bundled loader found PoCL through the bundle's vendors folder" has devices.txt '^platform: Portable Computing Language'
check "verify on the bf16 checkpoint passes" step_exit verify-bf16-tiny 0
check "verify says the backends agree" has verify.txt '^OK: the backends agree'
for test in pp128 pp512 tg64; do
  check "the summary has the bf16 $test figure" has summary.md "^\| qwen3 10M BF16 \| opencl .* \| $test \| [0-9.]+ ± [0-9.]+ \| bench-bf16-"
done
# FS_DEVICE_SPLIT=1: tiny-tied as Q4_K_M, one of its 2 layers on the device (the CPU runs the other and the output),
# then all; tiny-moe as Q4_K_M on the device with its experts on the CPU, then all of it there.
for name in quantize-dense quantize-moe make-moe bench-fs-dense-ngl-1 bench-fs-dense-ngl-99 bench-fs-moe-cpu-moe \
    bench-fs-moe-all verify-dense-ngl-half verify-moe-cpu-moe; do
  check "the split step $name passes" step_exit "$name" 0
done
row() { has summary.md "^\| [^|]+ \| $1 \| $2 \| $3 \| [0-9.]+ ± [0-9.]+ \| $4 \|\$"; }
for test in pp16 tg4; do
  check "the summary has fs's dense $test at ngl 1" row 'opencl[^|]*' 1 "$test" bench-fs-dense-ngl-1
  check "the summary has fs's dense $test at ngl 3" row 'opencl[^|]*' 3 "$test" bench-fs-dense-ngl-99
  check "the summary has fs's MoE $test with the experts on the CPU" row 'opencl[^|]*' '[0-9]+' "$test" bench-fs-moe-cpu-moe
done
check "the split says its plan in one line" has bench.txt '^fs: -ngl 1: 1/3 layers on opencl '
if [[ -f "$root/device-bundle/peer.tar.xz" ]]; then
  # Here the peer's Vulkan device is Mesa's lavapipe (mesa-vulkan-drivers), when installed.
  for name in unpack-peer llama-devices bench-llama-dense-ngl-1 bench-llama-moe-cpu-moe; do
    check "the peer step $name passes" step_exit "$name" 0
  done
  check "the summary has llama.cpp's dense pp16 at ngl 1" row "[^|]*Vulkan[^|]*" 1 pp16 bench-llama-dense-ngl-1
fi
for t in Q8_0 Q4_K_M; do
  for kind in verify bench; do
    # Until fs reads GGUF it refuses the file in one line; once it does, the step passes. Either is recorded.
    check "$kind-$t passes or is refused in one 'fs:' line" \
      bash -c "grep -qE '^\| $kind-$t \| 0 \|' '$out/summary.md' || grep -qE '^\| $kind-$t \| 1 \| [0-9]+ \| fs: ' '$out/summary.md'"
  done
done
check "no stack trace in any output" bash -c "! grep -lE '^\s+at [a-z]+\.|Exception in thread' '$out'/*.txt"
if ((failures > 0)); then
  echo "selftest: $failures check(s) failed; the outputs:"
  cat "$out/summary.md" "$out/run.log"
  exit 1
fi
echo "selftest: every check passed"
