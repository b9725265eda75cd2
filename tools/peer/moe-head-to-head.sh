#!/usr/bin/env bash
# The MoE CPU benchmark: fs against a native llama.cpp on the qwen3moe files of make-moe-bench-model.sh (Qwen3-30B-A3B's
# layer, 6 layers), in the same minutes, 2 threads. For each file: the read bandwidth of the moment, the bytes of the
# weights a decoded token reads (tools/peer/moe_active_bytes.py: attention, router, 8 of 128 experts' three matrices
# per layer, one embedding row, the output head) and the decode roofline (bandwidth / those bytes); `fs bench` and
# `llama-bench` at pp$PP / tg$TG; with EACH=1 also `fs bench` on the native expert matmul one expert at a time
# (-Dfs.cpu.experts=each, the path before NativeExpertMatmul); with PARALLEL (e.g. 1,2,4,8) also `fs bench
# --parallel` against llama-batched-bench (16-token prompts, 32 generated tokens per stream; compare fs's aggregate
# tok/s with S_TG t/s).
#
#   tools/peer/moe-head-to-head.sh [DIR [TYPES]]     # DIR default ~/.cache/fs-peers/moe-bench, TYPES "Q8_0 Q4_K_M"
#
# LLAMA_BIN (default /root/peers/llama.cpp/build/bin); FS_JAVA_OPTS passes JVM flags to fs (-XX:UseAVX=2 for AVX2).
# Every figure is printed with /proc/loadavg read before it: on 2 cores any other job halves the figures.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$HOME/.cache/fs-peers/moe-bench}
types=${2:-Q8_0 Q4_K_M}
llama=${LLAMA_BIN:-/root/peers/llama.cpp/build/bin}
pp=${PP:-128} tg=${TG:-64} runs=${RUNS:-3}
bw=$(mktemp -d)/bandwidth
cc -O2 -march=native -pthread -o "$bw" "$repo/tools/peer/bandwidth.c"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# $(date -u +%FT%TZ) $(nproc) cores; pp$pp tg$tg, $runs runs each; FS_JAVA_OPTS='${FS_JAVA_OPTS:-}' LLAMA_BIN=$llama"
for t in $types; do
  f=$dir/moe-$t.gguf
  bytes=$(/usr/bin/python3 "$repo/tools/peer/moe_active_bytes.py" "$f")
  band=$("$bw" 2 | tail -1)
  gbs=$(grep -oE '"read_gb_s": [0-9.]+' <<<"$band" | grep -oE '[0-9.]+$' || true)
  roof=$(awk -v b="$bytes" -v g="${gbs:-0}" 'BEGIN { printf "%.1f", g * 1e9 / b }')
  echo "## $t $(du -h "$f" | cut -f1)  load $(load)  bandwidth 2 threads: $band  active bytes/token $bytes  decode roofline $roof tok/s"
  "$repo/fs" bench "$f" -p "$pp" -n "$tg" -r "$runs" -t 2 --backend cpu 2>/dev/null | tail -2
  if [ "${EACH:-0}" = 1 ]; then
    echo "load $(load)  (one expert at a time)"
    FS_JAVA_OPTS="${FS_JAVA_OPTS:-} -Dfs.cpu.experts=each" \
      "$repo/fs" bench "$f" -p "$pp" -n "$tg" -r "$runs" -t 2 --backend cpu 2>/dev/null | tail -2
  fi
  echo "load $(load)"
  "$llama/llama-bench" -m "$f" -t 2 -p "$pp" -n "$tg" -r "$runs" 2>/dev/null | grep -E "pp$pp|tg$tg"
  if [ -n "${PARALLEL:-}" ]; then
    echo "load $(load)"
    "$repo/fs" bench "$f" --parallel "$PARALLEL" -n 32 -r 1 -t 2 --backend cpu 2>/dev/null
    echo "load $(load)"
    "$llama/llama-batched-bench" -m "$f" -t 2 -c 2048 -b 512 -ub 512 -npp 16 -ntg 4 -npl 1 >/dev/null 2>&1
    "$llama/llama-batched-bench" -m "$f" -t 2 -c 2048 -b 512 -ub 512 -npp 16 -ntg 32 -npl "$PARALLEL" 2>/dev/null \
      | grep -E '^\|'
  fi
done
echo "# end $(date -u +%FT%TZ) load $(load)"
