#!/usr/bin/env bash
# Runs fs on a lent NVIDIA machine from device-bundle/ (made here by prepare.sh): fs devices, fs verify on a bf16
# checkpoint and on two quantized GGUF files, fs bench on the same formats over OpenCL, and nvidia-smi. Every output
# and a summary of the figures go to $OUT (the device tool brings back what is there), else to device-out/.
#
#   FS_DEVICE_ICD=nvidia|pocl  which OpenCL driver the bundled ICD loader gets (default nvidia; pocl is the local test)
#   FS_DEVICE_BUDGET=SECONDS   the whole run's time, every step included (default 540: a 600 s call with margin)
#   FS_DEVICE_FULL=1|0         bench a Qwen3-0.6B-shaped checkpoint made on the spot (default 1; 0 benches the tiny one)
#   FS_DEVICE_SPLIT=1|0        first bench that checkpoint split, half its layers on the GPU (-ngl HALF) and, for
#                              comparison, -ngl all, -p 128 -n 32 -r 2, in about 200 s of the budget (default 0)
#
# Each step runs under timeout, with at most what is left of the budget, so that one hang costs one step, not the
# lease; a step that fails is recorded with its first line of stderr and the run goes on.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$root/device-bundle"
out="${OUT:-$root/device-out}"
icd="${FS_DEVICE_ICD:-nvidia}"
budget="${FS_DEVICE_BUDGET:-540}"
full="${FS_DEVICE_FULL:-1}"
split="${FS_DEVICE_SPLIT:-0}"
quantized=(Q8_0 Q4_K_M)
start=$SECONDS

mkdir -p "$out" || exit 1
rm -f "$out"/{summary.md,run.log,system.txt,devices.txt,verify.txt,bench.txt}
exec 3>&1 4>&2 > >(tee -a "$out/run.log") 2>&1
tee_pid=$!
say() { printf '[%4ds] %s\n' $((SECONDS - start)) "$*"; }
[[ -f "$bundle/runtime.tar.xz" ]] || { say "no device-bundle/runtime.tar.xz: run tools/device/prepare.sh here first"; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/fs-device.XXXXXX")"
# On every exit, run.log is made whole (tee done) before the device tool collects $OUT.
trap 'rm -rf "$work"; exec 1>&3 2>&4; wait "$tee_pid"' EXIT
steps="$work/steps.tsv"
: >"$steps"

# step NAME FILE LIMIT CMD…: CMD's stdout to $work/NAME.out, stderr to $work/NAME.err, both appended to FILE.
step() {
  local name="$1" file="$2" limit="$3" left rc t0
  shift 3
  left=$((budget - (SECONDS - start) - 10))  # 10 s kept for the summary
  ((left < limit)) && limit=$left
  if ((limit < 5)); then
    printf '%s\tskipped\t0\tno time left in the budget\n' "$name" >>"$steps"
    say "$name: skipped (budget spent)"
    return 1
  fi
  say "$name: $* (limit ${limit}s)"
  t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  # The JVM's notice of the incubating Vector API is not fs's output.
  sed -i '/^WARNING: Using incubator modules/d' "$work/$name.err"
  { echo "=== $name (exit $rc, $((SECONDS - t0)) s): $*"; cat "$work/$name.out"
    [[ -s "$work/$name.err" ]] && { echo "--- stderr"; cat "$work/$name.err"; }; echo; } >>"$out/$file"
  local note=""
  if ((rc == 124 || rc == 137)); then note="timed out after ${limit}s"
  elif grep -q '^Traceback' "$work/$name.err"; then note="$(grep -v '^\s*$' "$work/$name.err" | tail -1)"
  elif ((rc != 0)); then note="$(grep -v '^\s*$' "$work/$name.err" | head -1)"
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" $((SECONDS - t0)) "${note//$'\t'/ }" >>"$steps"
  say "$name: exit $rc${note:+ ($note)}"
  return "$rc"
}

# --- the machine
{ echo "date: $(date -u +%FT%TZ)"; uname -a; echo "cores: $(nproc)"; grep -m1 'model name' /proc/cpuinfo
  grep MemTotal /proc/meminfo; } >"$out/system.txt" 2>&1
command -v nvidia-smi >/dev/null && step nvidia-smi system.txt 20 nvidia-smi

# --- the OpenCL driver behind the bundled loader
export LD_LIBRARY_PATH="$bundle/lib"
case "$icd" in
  nvidia)
    # The ICD file names the library bare: an installed driver is found through ld.so's cache, a mounted one
    # (/usr/local/nvidia on this workplace's machines, which ldconfig may not know) through the library path.
    for dir in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
      [[ -e "$dir/libnvidia-opencl.so.1" ]] && LD_LIBRARY_PATH+=":$dir"
    done
    export OCL_ICD_VENDORS="$bundle/vendors"
    { echo "libnvidia-opencl.so.1 found at:"; find /usr/local/nvidia /usr/lib /usr/lib64 -maxdepth 3 \
        -name 'libnvidia-opencl.so*' 2>/dev/null; ldconfig -p 2>/dev/null | grep -E 'libnvidia-opencl|libcuda\.so'
      ls -l /etc/OpenCL/vendors 2>/dev/null; } >>"$out/system.txt"
    ;;
  pocl)
    mkdir -p "$work/vendors"
    cp /etc/OpenCL/vendors/pocl.icd "$work/vendors/" || { say "no /etc/OpenCL/vendors/pocl.icd (apt-get install pocl-opencl-icd)"; exit 1; }
    export OCL_ICD_VENDORS="$work/vendors"
    ;;
  *) say "FS_DEVICE_ICD is '$icd'; it takes nvidia or pocl"; exit 2 ;;
esac
say "ICD: $icd, OCL_ICD_VENDORS=$OCL_ICD_VENDORS, LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

# --- the runtime and the models
# Python unpacks: python3 is on the CUDA image and here, where xz may not be. make_checkpoint.py needs torch, which the
# CUDA image's python3 has; here it may be another python3.
python=python3
for candidate in python3 /usr/bin/python3; do
  "$candidate" -c 'import torch' 2>/dev/null && { python="$candidate"; break; }
done
# The helpers are Python files, not shell functions, because timeout runs programs.
cat >"$work/unpack.py" <<'PY'
import lzma, shutil, sys, tarfile
kind, source, target = sys.argv[1:]
if kind == "tar":
    with tarfile.open(source, "r:xz") as archive:
        extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(target, **extra)
else:
    with lzma.open(source) as packed, open(target, "wb") as plain:
        shutil.copyfileobj(packed, plain)
PY
step unpack-runtime run.log 60 "$python" "$work/unpack.py" tar "$bundle/runtime.tar.xz" "$work" || exit 1
mkdir -p "$work/tokenizer" "$work/cache"
step unpack-tokenizer run.log 30 "$python" "$work/unpack.py" xz "$bundle/models/tokenizer.json.xz" "$work/tokenizer/tokenizer.json" || exit 1
cp "$bundle/models/tokenizer_config.json" "$work/tokenizer/"

# make_checkpoint.py writes the same checkpoints as the committed ones (its presets), with the tokenizer from here.
cat >"$work/make_checkpoint.py" <<'PY'
import importlib.util, sys
script, tokenizer, shape, target = sys.argv[1:]
spec = importlib.util.spec_from_file_location("make_checkpoint", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.TOKENIZER_DIR = tokenizer
module.write_checkpoint(target, dict(module.FULL if shape == "full" else module.PRESETS[shape]))
PY
make_checkpoint=("$python" "$work/make_checkpoint.py" "$root/tools/reference/make_checkpoint.py" "$work/tokenizer")
step make-tiny-tied run.log 90 "${make_checkpoint[@]}" tiny-tied "$work/tiny-tied"
bench_model="$work/tiny-tied"
if [[ "$full" != 0 ]] && step make-full run.log 150 "${make_checkpoint[@]}" full "$work/full"; then
  bench_model="$work/full"
fi

# Signal chaining, as ./fs does: an LLVM-based OpenCL driver's signal handlers must not replace HotSpot's.
jsig=()
[[ -f "$work/runtime/lib/libjsig.so" ]] && jsig=(LD_PRELOAD="$work/runtime/lib/libjsig.so")
fs=(env FS_CACHE_DIR="$work/cache" "${jsig[@]}" "$work/runtime/bin/java" --add-modules jdk.incubator.vector
    --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -Xss4m -jar "$bundle/app/fs.jar")

# The same threads for fs and llama.cpp: the physical cores, as llama-bench counts by default.
threads="$(lscpu -p=core,socket 2>/dev/null | grep -v '^#' | sort -u | wc -l)"
((threads > 0)) || threads="$(nproc)"

# --- llama.cpp's Vulkan build, the peer of the split (prepare.sh puts it in the bundle when it was built here)
llama_bench=()
if [[ -f "$bundle/peer.tar.xz" ]] && step unpack-peer run.log 60 "$python" "$work/unpack.py" tar "$bundle/peer.tar.xz" "$work"; then
  # Its CPU backend as this machine takes it: AVX-512 (F, BW, VL, VBMI, VNNI, BF16, as prepare.sh's build) where the
  # processor has all of it, else AVX2.
  isa=avx512
  for flag in avx512f avx512bw avx512vl avx512vbmi avx512_vnni avx512_bf16; do
    grep -qw "$flag" /proc/cpuinfo || isa=avx2
  done
  cp -a "$work/peer/cpu-$isa/." "$work/peer/lib/"
  # The driver's Vulkan ICD; the library it names is found through LD_LIBRARY_PATH (the driver's folder, above).
  for icd_json in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
    [[ "$icd" == nvidia && -f "$icd_json" ]] && { export VK_DRIVER_FILES="$icd_json"; break; }
  done
  # Here (pocl) the Vulkan device is Mesa's lavapipe, a CPU device, which ggml skips unless named.
  [[ "$icd" == pocl ]] && export GGML_VK_VISIBLE_DEVICES=0
  llama_bench=(env LD_LIBRARY_PATH="$work/peer/lib:$LD_LIBRARY_PATH" "$work/peer/bin/llama-bench")
  say "llama.cpp: Vulkan build, CPU backend $isa, VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset, the loader chooses}"
fi
say "threads: $threads"

# --- fs
step version devices.txt 30 "${fs[@]}" --version
if ! step devices devices.txt 60 "${fs[@]}" devices || { [[ "$icd" == nvidia ]] && ! grep -q NVIDIA "$work/devices.out"; }; then
  OCL_ICD_DEBUG=15 step devices-debug devices.txt 30 "${fs[@]}" devices  # the loader says which ICD it tried and why
fi
# The Vulkan loader says why a driver it found did not load.
((${#llama_bench[@]})) && VK_LOADER_DEBUG=error,warn step llama-devices devices.txt 60 "${llama_bench[@]}" --list-devices
shape="$(basename "$bench_model")"
if [[ "$split" == 1 ]]; then
  # Before the other steps, so that the split gets its time. Each case runs fs, then llama.cpp's Vulkan build when the
  # bundle has one (prepare.sh's peer/), on the same GGUF file with the same threads, one after the other.
  # Dense: the bench checkpoint as Q4_K_M (the file people download), the last half of its layers on the GPU (the
  # first half and the output on the CPU), against every layer there.
  layers="$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["num_hidden_layers"])' "$bench_model/config.json")"
  dense="$work/$shape-Q4_K_M.gguf"
  # Each bench: prompt processing of 512 and generation of 64, 3 repetitions, both engines; here (pocl, where the
  # peer's Vulkan device is lavapipe, far slower) a token's worth.
  tests=(-p 512 -n 64 -r 3)
  [[ "$icd" == pocl ]] && tests=(-p 16 -n 4 -r 1)
  step quantize-dense run.log 120 "${fs[@]}" quantize "$bench_model" -o "$dense" --type Q4_K_M -t "$threads"
  for ngl in $((layers / 2)) 99; do
    step "bench-fs-dense-ngl-$ngl" bench.txt 100 "${fs[@]}" bench --backend opencl --json "$dense" "${tests[@]}" \
      -t "$threads" -ngl "$ngl"
    ((${#llama_bench[@]})) && step "bench-llama-dense-ngl-$ngl" bench.txt 100 "${llama_bench[@]}" -m "$dense" \
      "${tests[@]}" -t "$threads" -ngl "$ngl" -o json
  done
  # MoE: Qwen3-30B-A3B's layer (tools/peer/make_moe_bench_model.py, 2 layers; without FS_DEVICE_FULL the same
  # generator at a small shape), every layer on the GPU with the experts on the CPU (--cpu-moe; llama.cpp's
  # -ot exps=CPU), against all of it there.
  moe="$work/moe"
  cat >"$work/make_moe.py" <<'PY'
import importlib.util, sys
script, q_tied, target, size = sys.argv[1:]
spec = importlib.util.spec_from_file_location("make_moe_bench_model", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.Q_TIED = sys.modules["make_ggufs"].Q_TIED = q_tied  # the bundle's copy: models/ does not travel
if size == "small":
    module.SPEC = dict(module.SPEC, hidden=256, heads=4, kv_heads=2, head_dim=64, experts=8, top_k=2,
                       moe_intermediate=256)
sys.exit(module.main([target, "2"]))
PY
  step make-moe run.log 150 "$python" "$work/make_moe.py" "$root/tools/peer/make_moe_bench_model.py" \
    "$bundle/models/q-tied" "$moe" "$([[ "$full" != 0 ]] && echo full || echo small)"
  step quantize-moe run.log 120 "${fs[@]}" quantize "$moe" -o "$moe-Q4_K_M.gguf" --type Q4_K_M -t "$threads"
  for placement in cpu-moe all; do
    fs_flags=(-ngl 99) llama_flags=(-ngl 99)
    [[ "$placement" == cpu-moe ]] && fs_flags+=(--cpu-moe) llama_flags+=(-ot exps=CPU)
    step "bench-fs-moe-$placement" bench.txt 100 "${fs[@]}" bench --backend opencl --json "$moe-Q4_K_M.gguf" \
      "${tests[@]}" -t "$threads" "${fs_flags[@]}"
    ((${#llama_bench[@]})) && step "bench-llama-moe-$placement" bench.txt 100 "${llama_bench[@]}" -m "$moe-Q4_K_M.gguf" \
      "${tests[@]}" -t "$threads" "${llama_flags[@]}" -o json
  done
  # fs verify on the splits: each op on each device against the exact CPU path.
  step verify-dense-ngl-half verify.txt 120 "${fs[@]}" verify "$dense" -ngl $((layers / 2))
  step verify-moe-cpu-moe verify.txt 120 "${fs[@]}" verify "$moe-Q4_K_M.gguf" --cpu-moe
fi
step verify-bf16-tiny verify.txt 90 "${fs[@]}" verify "$work/tiny-tied"
bench=("${fs[@]}" bench --backend opencl -r 3 --json)
# Prefill and generation apart: bench prints its JSON at the end, so a test that overruns loses only its own figures.
step "bench-bf16-$shape-pp" bench.txt 120 "${bench[@]}" "$bench_model" -p 128,512 -n 0
step "bench-bf16-$shape-tg" bench.txt 120 "${bench[@]}" "$bench_model" -p 0 -n 64
for t in "${quantized[@]}"; do
  step "verify-$t" verify.txt 60 "${fs[@]}" verify "$bundle/models/model-$t.gguf"
  step "bench-$t" bench.txt 90 "${bench[@]}" "$bundle/models/model-$t.gguf" -p 128 -n 64
done
[[ "$bench_model" == "$work/full" ]] && step verify-bf16-full verify.txt 120 "${fs[@]}" verify "$work/full"
# The same machine's CPU (the Vector API path), for scale, with what time is left.
step "bench-bf16-$shape-cpu" bench.txt 120 "${fs[@]}" bench --backend cpu -r 3 --json "$bench_model" -p 128 -n 64

# --- the summary: every step, then every bench figure and verify's verdicts
{
  echo "# fs on $( (nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "$icd") | head -1)"
  echo
  echo "$(date -u +%FT%TZ), ICD $icd, $(nproc) cores, $((SECONDS - start)) s of a ${budget} s budget."
  echo
  echo "| step | exit | seconds | note |"
  echo "|---|---|---|---|"
  while IFS=$'\t' read -r name rc seconds note; do echo "| $name | $rc | $seconds | ${note//|/\\|} |"; done <"$steps"
  echo
  echo "| model | backend | ngl | test | tok/s | step |"
  echo "|---|---|---|---|---|---|"
  "$python" - "$work"/bench-*.out <<'PY' || echo "| (bench figures could not be read: see bench.txt) | | | | | |"
import json, os, sys
for path in sys.argv[1:]:
    name = os.path.basename(path)[:-len(".out")]
    try:
        rows = json.load(open(path))
    except ValueError:
        continue  # a bench that failed printed no JSON; the steps table has its reason
    for r in rows:
        test = f"pp{r['n_prompt']}" if r["n_prompt"] else f"tg{r['n_gen']}"
        print(f"| {r['model_type']} | {r['backends']} | {r.get('n_gpu_layers', '')} | {test} "
              f"| {r['avg_ts']:.2f} ± {r['stddev_ts']:.2f} | {name} |")
PY
  echo
  for f in "$work"/verify-*.out; do
    [[ -s "$f" ]] || continue
    echo "- $(basename "$f" .out): $(grep -E '^largest NMSE' "$f" | head -1); $(tail -1 "$f")"
  done
} >"$out/summary.md"
say "done: $(ls "$out" | tr '\n' ' ')in $out"
cat "$out/summary.md"
