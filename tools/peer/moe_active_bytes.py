#!/usr/bin/python3
"""Bytes of the weights one decoded token reads in a qwen3moe GGUF file: every tensor whole, except the embedding
(one row) and the expert stacks (expert_used_count of expert_count experts).

    PYTHONPATH=/root/peers/llama.cpp/gguf-py /usr/bin/python3 tools/peer/moe_active_bytes.py FILE.gguf
"""
import os
import sys

sys.path.insert(0, os.environ.get("GGUF_PY", "/root/peers/llama.cpp/gguf-py"))
import gguf  # noqa: E402


def active_bytes(path):
    reader = gguf.GGUFReader(path)
    field = reader.fields["qwen3moe.expert_used_count"]
    used = int(field.parts[field.data[0]][0])
    total = 0
    for t in reader.tensors:
        n = int(t.n_bytes)
        if t.name == "token_embd.weight":
            n //= int(t.shape[1])
        elif "_exps" in t.name:
            n = n * used // int(t.shape[2])
        total += n
    return total


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(active_bytes(p))
