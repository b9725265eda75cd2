#!/usr/bin/env bash
# Concurrent greedy streams, fs against a native llama.cpp on the same GGUF files, in the same minutes, 2 threads:
# for each file the read bandwidth of the moment, `fs bench --parallel` (N streams through fs's scheduler, one
# decode row per stream in every forward) and `llama-batched-bench` (N sequences decoded in one batch), each with
# 16-token prompts and 32 generated tokens per stream. The figure to compare is the aggregate generation speed:
# fs's "aggregate tok/s" column and llama-batched-bench's S_TG t/s.
#
#   tools/peer/batched-head-to-head.sh DIR [TYPES] [STREAMS]
#
# DIR holds full-T.gguf for each T of TYPES (default "Q4_K_M BF16"; see quantized-head-to-head.sh for how they are
# made); STREAMS defaults to 1,2,4,8. LLAMA_BIN is the llama.cpp build's bin folder (default
# ~/.cache/fs-peers/llama.cpp/build/bin; llama-batched-bench is built there by
# `cmake --build build --target llama-batched-bench`). Every figure is printed with /proc/loadavg read before it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: batched-head-to-head.sh DIR [TYPES] [STREAMS]}
types=${2:-Q4_K_M BF16}
streams=${3:-1,2,4,8}
llama=${LLAMA_BIN:-$HOME/.cache/fs-peers/llama.cpp/build/bin}
bw=$(mktemp -d)/bandwidth
cc -O2 -march=native -pthread -o "$bw" "$repo/tools/peer/bandwidth.c"
echo "# $(date -u +%FT%TZ) $(nproc) cores; streams $streams, prompts of 16, 32 tokens each"
for t in $types; do
  f=$dir/full-$t.gguf
  echo "## $t $(du -h "$f" | cut -f1)  load $(cut -d' ' -f1-3 /proc/loadavg)  bandwidth 2 threads: $("$bw" 2 | tail -1)"
  "$repo/fs" bench "$f" --parallel "$streams" -n 32 -r 1 -t 2 --backend cpu 2>/dev/null
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
  # A short first run maps the file in and warms the caches; its row is not printed.
  "$llama/llama-batched-bench" -m "$f" -t 2 -c 2048 -b 512 -ub 512 -npp 16 -ntg 4 -npl 1 >/dev/null 2>&1
  "$llama/llama-batched-bench" -m "$f" -t 2 -c 2048 -b 512 -ub 512 -npp 16 -ntg 32 -npl "$streams" 2>/dev/null \
    | grep -E '^\|'
done
