#!/usr/bin/env bash
# llama.cpp's own logits (llama-T.json, the goldens' layout: models/README.md) for GGUF model directories.
#
#   tools/peer/llama-logits.sh [DIR...]          # default: models/q-moe models/q-moe-heldout models/q-dense-heldout
#
# Builds tools/peer/llama_logits.c with gcc against a native llama.cpp build (LLAMA_CPP, default
# /root/peers/llama.cpp: headers in include/ and ggml/include/, libllama and libggml* in build/bin or build/src)
# into a temporary directory, then for every DIR/model-T.gguf writes DIR/llama-T.json from DIR/tokens.txt: CPU
# backend, 2 threads (THREADS), top 5 ids per position, 8 greedy tokens. OUT_DIR writes the JSON files there instead
# of into DIR (to compare with committed ones).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
llama=${LLAMA_CPP:-/root/peers/llama.cpp}
threads=${THREADS:-2}
[ $# -gt 0 ] || set -- "$repo/models/q-moe" "$repo/models/q-moe-heldout" "$repo/models/q-dense-heldout"

libs=()
for d in "$llama/build/bin" "$llama/build/src" "$llama/build/ggml/src"; do
  [ -d "$d" ] && libs+=(-L"$d" -Wl,-rpath,"$d")
done
work=$(mktemp -d /tmp/fs-llama-logits.XXXXXX)
trap 'rm -rf "$work"' EXIT
gcc -O2 -std=c11 -I"$llama/include" -I"$llama/ggml/include" "$repo/tools/peer/llama_logits.c" \
  "${libs[@]}" -lllama -lggml -lggml-base -o "$work/llama_logits"

for dir in "$@"; do
  [ -f "$dir/tokens.txt" ] || { echo "llama-logits: $dir/tokens.txt not found" >&2; exit 1; }
  found=0
  for gguf in "$dir"/model-*.gguf; do
    [ -f "$gguf" ] || continue
    found=1
    type=$(basename "$gguf" .gguf); type=${type#model-}
    out=${OUT_DIR:-$dir}/llama-$type.json
    mkdir -p "$(dirname "$out")"
    "$work/llama_logits" "$gguf" "$dir/tokens.txt" "$threads" 5 8 > "$out.tmp"
    mv "$out.tmp" "$out"
    echo "$out"
  done
  [ $found = 1 ] || { echo "llama-logits: no model-*.gguf in $dir" >&2; exit 1; }
done
