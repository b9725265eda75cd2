#!/bin/bash
# Every measurement behind docs/QUANTIZATION.md, in one run (the speed figures excepted: docs/PERFORMANCE.md,
# "Quantized formats head to head", has them and how they were taken).
#
#   tools/quantization/decide.sh [interop.py options…]
#
# 1. interop.py: fs quantize and llama-quantize make every type of the zoo, the trained model and models/full; their
#    files are compared tensor by tensor, llama-bench runs fs's, llama.cpp's logits on both are compared.
# 2. evaluate.py: the quality of each format on ../shared/trained's eval.txt against its bf16 safetensors, once for
#    fs's files and once for llama-quantize's, side by side. IQ2_XXS is judged with llama-imatrix's importance matrix
#    of ../shared/trained (made on other text); interop.py's IQ2_XXS rows use fs imatrix over eval.txt itself, which
#    would flatter it here.
#
# Environment: SHARED (default ../shared), FULL (models/full's directory; default models/full), WORK (default
# /tmp/fs-quantization), THREADS (default 2). Outputs: $WORK/interop.md, $WORK/quality-fs.md, $WORK/quality-llama.md
# and their JSON. On 2 cores the whole run takes about an hour, most of it models/full.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${SHARED:-$repo/../shared}
full=${FULL:-$repo/models/full}
work=${WORK:-/tmp/fs-quantization}
threads=${THREADS:-2}
trained=$shared/trained
llama_bin=${LLAMA_BIN:-$HOME/.cache/fs-peers/llama.cpp/build/bin}
mkdir -p "$work"

# The interop check fails (exit 1) when any file does not pass; the quality tables are still worth making.
interop=0
python3 "$here/interop.py" --trained "$trained" --full-dir "$full" --work "$work/interop" -t "$threads" \
    -o "$work/interop.md" --json "$work/interop.json" "$@" || interop=$?

# IQ2_XXS out of sample: both quantizers with llama-imatrix's matrix of the trained model (../shared/trained's
# model-IQ2_XXS.gguf is llama-quantize's file made with it).
t=$work/interop/trained
mkdir -p "$t"
"$repo/fs" quantize "$trained" -o "$t/fs-safetensors-IQ2_XXS-shared-imatrix.gguf" --type IQ2_XXS \
    --imatrix "$trained/imatrix.gguf" -t "$threads"
"$llama_bin/llama-quantize" --imatrix "$trained/imatrix.gguf" "$trained/model-BF16.gguf" \
    "$t/llama-IQ2_XXS-shared-imatrix.gguf" IQ2_XXS "$threads" > "$t/llama-IQ2_XXS-shared-imatrix.log" 2>&1
# (exit 1 is expected: ../shared's file marks six tokens USER_DEFINED where fs, as convert_hf_to_gguf.py, writes
# CONTROL; the tensors are what this checks)
python3 "$here/compare_gguf.py" "$t/fs-safetensors-IQ2_XXS-shared-imatrix.gguf" "$trained/model-IQ2_XXS.gguf" \
    > "$work/iq2_xxs-shared-imatrix-compare.json" || true

fs_files=() llama_files=()
for type in BF16 F16 Q8_0 Q6_K Q5_K_M Q4_K_M Q4_K_S Q4_0 Q2_K; do
    fs_files+=("$t/fs-safetensors-$type.gguf") llama_files+=("$t/llama-$type.gguf")
done
fs_files+=("$t/fs-safetensors-IQ2_XXS-shared-imatrix.gguf") llama_files+=("$t/llama-IQ2_XXS-shared-imatrix.gguf")
for who in fs llama; do
    files=("${fs_files[@]}")
    [ "$who" = llama ] && files=("${llama_files[@]}")
    python3 "$here/evaluate.py" "$trained" "${files[@]}" -f "$trained/eval.txt" -c 128 -t "$threads" \
        -o "$work/quality-$who.md" --json "$work/quality-$who.json"
done
echo "decide.sh: $work/interop.md, $work/quality-fs.md, $work/quality-llama.md" >&2
exit "$interop"
