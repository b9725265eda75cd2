#!/usr/bin/env bash
# fs against a native llama.cpp on the same GGUF files, in the same minutes, 2 threads: for each file the read
# bandwidth of the moment, `fs bench` (Vector API), `llama-bench`, and optionally `fs bench --backend opencl`.
#
#   tools/peer/quantized-head-to-head.sh DIR [TYPES] [OPENCL_TYPES]
#
# DIR holds full-T.gguf for each T of TYPES (default "BF16 Q8_0 Q6_K Q4_K_M Q4_0 Q2_K"), made from models/full by
# tools/reference/to_gguf.py (BF16) and llama.cpp's llama-quantize (the others); OPENCL_TYPES (default "Q8_0
# Q4_K_M") also run on OpenCL (PoCL here). LLAMA_BIN is the llama.cpp build's bin folder (default
# ~/.cache/fs-peers/llama.cpp/build/bin, what ../shared/peers/build-llama-cpp.sh makes). IK_BIN, when set, is an
# ik_llama.cpp build's bin folder: its llama-bench runs too, with -rtr 1 (rows repacked at load), the next mark. Every
# figure is printed with /proc/loadavg read before it: on 2 cores any other job halves the figures.
# tools/peer/head-to-head-table.py turns this output into docs/PERFORMANCE.md's table (fs ÷ llama.cpp per type).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: quantized-head-to-head.sh DIR [TYPES] [OPENCL_TYPES]}
types=${2:-BF16 Q8_0 Q6_K Q4_K_M Q4_0 Q2_K}
opencl_types=${3-Q8_0 Q4_K_M}  # "" runs none
llama=${LLAMA_BIN:-$HOME/.cache/fs-peers/llama.cpp/build/bin}
pp=${PP:-128} tg=${TG:-64} runs=${RUNS:-3}
bw=$(mktemp -d)/bandwidth
cc -O2 -march=native -pthread -o "$bw" "$repo/tools/peer/bandwidth.c"
echo "# $(date -u +%FT%TZ) $(nproc) cores; pp$pp tg$tg, $runs runs each"
for t in $types; do
  f=$dir/full-$t.gguf
  echo "## $t $(du -h "$f" | cut -f1)  load $(cut -d' ' -f1-3 /proc/loadavg)  bandwidth 2 threads: $("$bw" 2 | tail -1)"
  "$repo/fs" bench "$f" -p "$pp" -n "$tg" -r "$runs" -t 2 --backend cpu 2>/dev/null | tail -2
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$llama/llama-bench" -m "$f" -t 2 -p "$pp" -n "$tg" -r "$runs" 2>/dev/null | grep -E "pp$pp|tg$tg"
  if [[ -n "${IK_BIN:-}" ]]; then
    echo "load $(cut -d' ' -f1-3 /proc/loadavg) (ik_llama.cpp, -rtr 1)"
    "$IK_BIN/llama-bench" -m "$f" -t 2 -p "$pp" -n "$tg" -r "$runs" -rtr 1 2>/dev/null | grep -E "pp$pp|tg$tg"
  fi
  case " $opencl_types " in *" $t "*)
    echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
    "$repo/fs" bench "$f" -p 32 -n 16 -r 2 -t 2 --backend opencl 2>/dev/null | tail -2 ;;
  esac
done
