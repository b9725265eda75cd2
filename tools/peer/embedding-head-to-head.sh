#!/usr/bin/env bash
# Embedding throughput, fs against llama.cpp's llama-embedding, same file, same documents, same minutes, 2 threads.
#
#   tools/peer/embedding-head-to-head.sh EMBED.gguf TEXT [RUNS]
#
# EMBED.gguf: an embedding GGUF (qwen3.pooling_type last), e.g. models/full made an embedding model (its
# 1_Pooling/config.json from models/tiny-embed, and that tokenizer.json, which appends <|endoftext|>) and written by
# `fs quantize --type Q8_0`. TEXT: any UTF-8 text (../shared/trained/eval.txt); 256 documents of 32-512 tokens are cut
# from it with a fixed seed (DOCS of them), one per line. Each tool runs on all of them and on the first one alone, RUNS times (default 1),
# and the throughput is (tokens of all - tokens of 1) / (best wall time of all - best of 1): the load and start-up
# cancel, what remains is the forwards, the batching and the pooling. Tokens are llama-embedding's own count.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
model=${1:?usage: embedding-head-to-head.sh EMBED.gguf TEXT [RUNS]}
text=${2:?usage: embedding-head-to-head.sh EMBED.gguf TEXT [RUNS]}
runs=${3:-1}
# DOCS documents (default 256, the benchmark's; about 70,000 tokens, minutes a run at 2 threads).
docs=${DOCS:-256}
# llama-embedding packs whole documents into batches of CTX tokens (its context, batch and micro-batch alike: a
# document may not span two); its attention spans the whole batch, so a smaller CTX can be faster. Default 2048.
ctx=${CTX:-2048}
llama=${LLAMA_BIN:-$HOME/.cache/fs-peers/llama.cpp/build/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$text" "$work" "$docs" <<'PY'
import random, re, sys
# llama-embedding reads escapes (\n, \x15) in its prompt file as the characters: words with a backslash are left out
words = [w for w in re.sub(r"\s+", " ", open(sys.argv[1], encoding="utf-8").read()).split(" ") if "\\" not in w]
random.seed(7)
docs = []
for _ in range(int(sys.argv[3])):
    n = max(8, int(random.randint(32, 512) * 0.6))  # words for about that many tokens
    start = random.randrange(0, len(words) - n)
    docs.append(" ".join(words[start:start + n]))
open(sys.argv[2] + "/all.txt", "w", encoding="utf-8").write("\n".join(docs) + "\n")
open(sys.argv[2] + "/1.txt", "w", encoding="utf-8").write(docs[0] + "\n")
PY
timed() { # wall seconds of one run of the command; its stderr kept in $work/log
  local s e; s=$(date +%s.%N); "$@" > /dev/null 2> "$work/log" || { cat "$work/log" >&2; exit 1; }
  e=$(date +%s.%N); echo "$e - $s" | bc -l
}
best() { # best wall seconds of RUNS runs
  local b=999999 t
  for _ in $(seq "$runs"); do t=$(timed "$@"); b=$(echo "if ($t < $b) $t else $b" | bc -l); done
  echo "$b"
}
llama_run() { "$llama/llama-embedding" -m "$model" -f "$1" -t 2 -c "$ctx" -b "$ctx" -ub "$ctx" --pooling last; }
fs_run() { "$repo/fs" embed "$model" -f "$1" -t 2 --backend cpu; }
decoded() { # the prompt tokens llama-embedding decoded in its last run (fs's count of them is the same)
  sed -n 's/.*batch_decode: n_tokens = \([0-9]*\).*/\1/p' "$work/log" | paste -sd+ | bc
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(basename "$model"): $docs documents; llama-embedding batches of $ctx;" \
  "best of $runs"
for tool in llama fs; do
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
  t_all=$(best "${tool}_run" "$work/all.txt")
  [[ $tool == llama ]] && n_all=$(decoded)
  t1=$(best "${tool}_run" "$work/1.txt")
  [[ $tool == llama ]] && n1=$(decoded) && echo "$n_all tokens, $n1 in the first document"
  printf '%-6s %d docs %.2f s, 1 doc %.2f s: %.0f tokens/s\n' "$tool" "$docs" "$t_all" "$t1" \
    "$(echo "($n_all - $n1) / ($t_all - $t1)" | bc -l)"
done
