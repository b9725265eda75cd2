#!/usr/bin/env bash
# The MoE CPU benchmark model (Qwen3-30B-A3B's layer exactly, 6 layers, q-tied's 8,064-token vocabulary, random bf16
# weights; see make_moe_bench_model.py), made outside the repo: DIR/checkpoint (deleted afterwards unless KEEP=1),
# DIR/moe-BF16.gguf (tools/reference/to_gguf.py, architecture qwen3moe) and DIR/moe-T.gguf for each T of TYPES
# (default "Q8_0 Q4_K_M", llama-quantize with 2 threads). ~7.3 GB bf16, 3.9 GB Q8_0, 2.3 GB Q4_K_M.
#
#   tools/peer/make-moe-bench-model.sh [DIR [TYPES]]     # DIR default ~/.cache/fs-peers/moe-bench
#
# LLAMA_BIN: llama.cpp's bin folder (default /root/peers/llama.cpp/build/bin); LAYERS: layer count (default 6).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$HOME/.cache/fs-peers/moe-bench}
types=${2:-Q8_0 Q4_K_M}
llama=${LLAMA_BIN:-/root/peers/llama.cpp/build/bin}
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$dir"
if [ ! -f "$dir/moe-BF16.gguf" ]; then
  "$python" "$repo/tools/peer/make_moe_bench_model.py" "$dir/checkpoint" "${LAYERS:-6}"
  "$python" "$repo/tools/reference/to_gguf.py" "$dir/checkpoint" "$dir/moe-BF16.gguf"
  [ "${KEEP:-0}" = 1 ] || rm -rf "$dir/checkpoint"
fi
for t in $types; do
  [ -f "$dir/moe-$t.gguf" ] || "$llama/llama-quantize" "$dir/moe-BF16.gguf" "$dir/moe-$t.gguf" "$t" 2 \
    > "$dir/quantize-$t.log" 2>&1
done
ls -l "$dir"
