#!/usr/bin/env bash
# Benchmarks llama.cpp (prebuilt, through the npm package node-llama-cpp) on a Qwen3 checkpoint, next to this
# machine's memory read bandwidth, so fs figures can be set against the peer's on the hardware of the day.
#
#   tools/peer/run-llama-cpp.sh [CHECKPOINT_DIR [TG_TOKENS [PP_TOKENS [RUNS]]]]   # defaults: models/full 64 128 3
#
# Installs node-llama-cpp@3.21.1 into a temporary directory and writes the GGUF there too: nothing lands in the repo.
# Set PEER_DIR to reuse an install (and its GGUF) across runs. Each figure is printed with /proc/loadavg, since
# other work on the machine slows both the bench and the bandwidth reading.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
checkpoint=${1:-$repo/models/full}
tg=${2:-64}
pp=${3:-128}
runs=${4:-3}
bench_js=${BENCH_JS:-$repo/../shared/peers/llama-cpp-bench.mjs}
[ -f "$bench_js" ] || bench_js=/work/shared/peers/llama-cpp-bench.mjs
[ -f "$bench_js" ] || { echo "run-llama-cpp: llama-cpp-bench.mjs not found; set BENCH_JS" >&2; exit 1; }
[ -f "$checkpoint/config.json" ] || { echo "run-llama-cpp: $checkpoint/config.json not found" >&2; exit 1; }

peer=${PEER_DIR:-$(mktemp -d /tmp/fs-peer.XXXXXX)}
mkdir -p "$peer"
if [ ! -d "$peer/node_modules/node-llama-cpp" ]; then
  (cd "$peer" && npm init -y >/dev/null && npm i -E node-llama-cpp@3.21.1 >/dev/null)
fi
cp "$bench_js" "$peer/llama-cpp-bench.mjs"

gguf=$peer/$(basename "$checkpoint")-bf16.gguf
[ -f "$gguf" ] || /usr/bin/python3 "$repo/tools/reference/to_gguf.py" "$checkpoint" "$gguf"

gcc -O2 -march=native -pthread "$repo/tools/peer/bandwidth.c" -o "$peer/bandwidth"
for threads in 1 2; do
  echo "loadavg before $(cut -d' ' -f1-3 /proc/loadavg)  $("$peer/bandwidth" "$threads")"
done
for run in $(seq "$runs"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  result=$(cd "$peer" && node llama-cpp-bench.mjs "$gguf" "$tg" "$pp" 2>/dev/null | tail -1)
  echo "loadavg before $load  run $run  $result"
done
