#!/usr/bin/env bash
# fs against a native llama.cpp at depth (positions already in the KV cache), same GGUF, same minutes, 2 threads:
# the read bandwidth of the moment, `fs bench -d` and `llama-bench -d` with the same cache type (CACHE: f16, the
# default of both, q8_0, f32 or bf16), llama.cpp with -fa 0,1 (only -fa 1 for q8_0: its quantized V cache needs
# flash attention).
#
#   tools/peer/depth-head-to-head.sh FILE.gguf [DEPTHS]
#
# DEPTHS defaults to "0,4096". LLAMA_BIN is the llama.cpp build's bin folder (default
# ~/.cache/fs-peers/llama.cpp/build/bin). PP (512), TG (64), RUNS (2) as llama-bench's -p, -n, -r. fs's --ctx is
# set to the largest depth + PP + TG. /proc/loadavg is printed before each run: on 2 cores any other job halves
# the figures.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
f=${1:?usage: depth-head-to-head.sh FILE.gguf [DEPTHS]}
depths=${2:-0,4096}
llama=${LLAMA_BIN:-$HOME/.cache/fs-peers/llama.cpp/build/bin}
pp=${PP:-512} tg=${TG:-64} runs=${RUNS:-2} cache=${CACHE:-f16}
fa=0,1
[[ $cache == q8_0 ]] && fa=1
most=$(tr ',' '\n' <<<"$depths" | sort -n | tail -1)
ctx=$((most + pp + tg))
bw=$(mktemp -d)/bandwidth
cc -O2 -march=native -pthread -o "$bw" "$repo/tools/peer/bandwidth.c"
echo "# $(date -u +%FT%TZ) $(nproc) cores; $f pp$pp tg$tg depths $depths, $runs runs each, cache $cache"
echo "## bandwidth 2 threads: $("$bw" 2 | tail -1)"
echo "## fs  $(date -u +%T)  load $(cut -d' ' -f1-3 /proc/loadavg)"
"$repo/fs" bench "$f" -p "$pp" -n "$tg" -d "$depths" -r "$runs" -t 2 --ctx "$ctx" -ctk "$cache" -ctv "$cache" 2>/dev/null
echo "## llama.cpp  $(date -u +%T)  load $(cut -d' ' -f1-3 /proc/loadavg)"
"$llama/llama-bench" -m "$f" -p "$pp" -n "$tg" -d "$depths" -r "$runs" -t 2 -fa "$fa" -ctk "$cache" -ctv "$cache" \
    2>/dev/null
echo "## end  $(date -u +%T)  load $(cut -d' ' -f1-3 /proc/loadavg)  bandwidth 2 threads: $("$bw" 2 | tail -1)"
