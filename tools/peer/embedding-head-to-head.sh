#!/usr/bin/env bash
# Embedding throughput, fs against llama.cpp's llama-embedding, same file, same documents, same minutes, 2 threads.
#
#   tools/peer/embedding-head-to-head.sh EMBED.gguf TEXT [RUNS]
#
# EMBED.gguf: an embedding GGUF (qwen3.pooling_type last), e.g. models/full made an embedding model (its
# 1_Pooling/config.json from models/tiny-embed, and that tokenizer.json, which appends <|endoftext|>) and written by
# `fs quantize --type Q8_0`. TEXT: any UTF-8 text (../shared/trained/eval.txt); 256 documents of 32-512 tokens are cut
# from it with a fixed seed, one per line. Each tool runs on all 256 and on the first one alone, RUNS times (default 3),
# and the throughput is (tokens of 256 - tokens of 1) / (best wall time of 256 - best of 1): the load and start-up
# cancel, what remains is the forwards, the batching and the pooling. Tokens are llama-embedding's own count.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
model=${1:?usage: embedding-head-to-head.sh EMBED.gguf TEXT [RUNS]}
text=${2:?usage: embedding-head-to-head.sh EMBED.gguf TEXT [RUNS]}
runs=${3:-3}
llama=${LLAMA_BIN:-$HOME/.cache/fs-peers/llama.cpp/build/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$text" "$work" <<'PY'
import random, re, sys
words = re.sub(r"\s+", " ", open(sys.argv[1], encoding="utf-8").read()).split(" ")
random.seed(7)
docs = []
for _ in range(256):
    n = max(8, int(random.randint(32, 512) * 0.6))  # words for about that many tokens
    start = random.randrange(0, len(words) - n)
    docs.append(" ".join(words[start:start + n]))
open(sys.argv[2] + "/256.txt", "w", encoding="utf-8").write("\n".join(docs) + "\n")
open(sys.argv[2] + "/1.txt", "w", encoding="utf-8").write(docs[0] + "\n")
PY
best() { # best wall seconds of RUNS runs of the command
  local b=999999
  for _ in $(seq "$runs"); do
    local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N)
    b=$(echo "if ($e - $s < $b) $e - $s else $b" | bc -l)
  done
  echo "$b"
}
tokens() { # llama-embedding's count of the prompt tokens of a documents file
  "$llama/llama-embedding" -m "$model" -f "$1" -t 2 -c 8192 -b 8192 -ub 8192 --pooling last 2>&1 \
    | sed -n 's/.*prompt eval time.*\/ *\([0-9]*\) tokens.*/\1/p' | tail -1
}
n256=$(tokens "$work/256.txt"); n1=$(tokens "$work/1.txt")
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(basename "$model"): 256 documents, $n256 tokens ($n1 in the first)"
for tool in fs llama; do
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [[ $tool == fs ]]; then
    run() { "$repo/fs" embed "$model" -f "$1" -t 2 --backend cpu; }
  else
    run() { "$llama/llama-embedding" -m "$model" -f "$1" -t 2 -c 8192 -b 8192 -ub 8192 --pooling last; }
  fi
  t256=$(best run "$work/256.txt"); t1=$(best run "$work/1.txt")
  printf '%-6s 256 docs %.2f s, 1 doc %.2f s: %.0f tokens/s\n' "$tool" "$t256" "$t1" \
    "$(echo "($n256 - $n1) / ($t256 - $t1)" | bc -l)"
done
