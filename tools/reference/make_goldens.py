#!/usr/bin/python3
"""Writes models/<name>/golden/{golden.json,last_logits.f32} from the float64 reference (qwen3_reference.py).

    python3 tools/reference/make_goldens.py models/tiny-tied models/tiny-untied models/tiny-tied-head-sharded

The prompt is real Qwen3 token ids taken from the tokenizer goldens in /work/shared/qwen3/tests (ids produced by the
Hugging Face tokenizer), joined where the joins cannot change the tokenization: plain text, then a rendered chat
(which starts with the special token <|im_start|>), then text that starts with a letter (after the chat's final
newlines). The ids are checked by decoding them with tokenizer.json back to prompt_text.

Fails (exit 1) when some position's top-6 logits are closer than MIN_GAP, or a greedy step's top-2 are: then the
engine's top-5 ids could legitimately differ from ours, and the checkpoint needs another seed. For a Qwen3-MoE
checkpoint also when some routing decision (prompt, greedy decode) has its k-th and (k+1)-th router logits closer than
MIN_ROUTER_GAP (golden.json then records min_router_gap).
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen3_reference import Qwen3Reference, load_checkpoint, router_gap  # noqa: E402

TESTS = "/work/shared/qwen3/tests"
MIN_GAP = 1e-2
# MoE: smallest allowed k-th minus (k+1)-th router logit (log of the probability ratio) at any MoE layer and position
MIN_ROUTER_GAP = 1e-3
PROBE_COUNT = 32
PROBE_SEED = 20250101
GREEDY_STEPS = 16


def tokenizer_case(n):
    with open(os.path.join(TESTS, "qwen3_tokenizer_golden.jsonl")) as f:
        for line in f:
            case = json.loads(line)
            if case["n"] == n:
                return case["text"], case["ids"]
    raise KeyError(n)


def chat_case(name):
    with open(os.path.join(TESTS, "qwen3_chat_template_golden.jsonl")) as f:
        for line in f:
            case = json.loads(line)
            if case["name"] == name:
                return case["rendered"], case["ids"]
    raise KeyError(name)


def prompt():
    parts = [tokenizer_case(175), chat_case("system_user_gen_nothink"), tokenizer_case(6)]
    return "".join(t for t, _ in parts), [i for _, ids in parts for i in ids]


def greedy_prompt():
    return chat_case("user_only_gen")


def decode(ids, tokenizer_path):
    """Byte-level BPE decode with tokenizer.json's vocab and added tokens (independent check of the id lists)."""
    with open(tokenizer_path) as f:
        tok = json.load(f)
    id_to_token = {v: k for k, v in tok["model"]["vocab"].items()}
    special = {t["id"]: t["content"] for t in tok["added_tokens"]}
    # GPT-2 byte-to-unicode table: printable bytes map to themselves, the rest to 256 + k
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    byte_of, k = {}, 0
    for b in range(256):
        if b in printable:
            byte_of[chr(b)] = b
        else:
            byte_of[chr(256 + k)] = b
            k += 1
    out, pending = [], bytearray()
    for i in ids:
        if i in special:
            out.append(pending.decode("utf-8"))
            pending = bytearray()
            out.append(special[i])
        else:
            pending.extend(byte_of[c] for c in id_to_token[i])
    out.append(pending.decode("utf-8"))
    return "".join(out)


def top_gaps(row, k):
    values = torch.topk(row, k).values
    return values[:-1] - values[1:]


def make_golden(directory):
    name = os.path.basename(os.path.normpath(directory))
    text, ids = prompt()
    greedy_text, greedy_ids = greedy_prompt()
    tokenizer = os.path.join(directory, "tokenizer.json")
    assert decode(ids, tokenizer) == text, "prompt ids do not decode to prompt_text"
    assert decode(greedy_ids, tokenizer) == greedy_text, "greedy prompt ids do not decode to its text"

    config, weights = load_checkpoint(directory)
    model = Qwen3Reference(config, weights)
    model.router_log = []
    logits = model.logits(ids)
    probe_ids = sorted(np.random.default_rng(PROBE_SEED).choice(config["vocab_size"], PROBE_COUNT, replace=False)
                       .tolist())
    positions = []
    min_gap = float("inf")
    for row in logits:
        top = torch.topk(row, 5)
        positions.append({"top_ids": top.indices.tolist(), "top_logits": top.values.tolist()})
        min_gap = min(min_gap, float(top_gaps(row, 6).min()))

    # greedy through the KV cache, and the same steps checked for a clear winner on the full-sequence path
    generated = model.greedy(greedy_ids, GREEDY_STEPS)
    greedy_logits = model.logits(greedy_ids + generated)[len(greedy_ids) - 1:-1]
    assert greedy_logits.argmax(dim=-1).tolist() == generated, "greedy via KV cache disagrees with full sequence"
    min_greedy_gap = min(float(top_gaps(row, 2)[0]) for row in greedy_logits)
    # every routing decision of the prompt, the greedy decode (KV cache) and its full-sequence check
    min_router_gap = min((float(router_gap(r, model.top_k).min()) for _, r in model.router_log), default=None)

    golden = {
        "checkpoint": name,
        "prompt_text": text,
        "prompt_ids": ids,
        "positions": positions,
        "probe_ids": probe_ids,
        "probe_logits": logits[:, probe_ids].tolist(),
        "greedy": {"prompt_text": greedy_text, "prompt_ids": greedy_ids, "generated_ids": generated,
                   "min_top2_gap": min_greedy_gap},
        "min_top6_gap": min_gap,
    }
    if min_router_gap is not None:
        golden["min_router_gap"] = min_router_gap
    out = os.path.join(directory, "golden")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    logits[-1].numpy().astype("<f4").tofile(os.path.join(out, "last_logits.f32"))
    mags = logits.abs().max(dim=-1).values
    print(f"{name}: {len(ids)} positions, min top-6 gap {min_gap:.4f}, greedy min top-2 gap {min_greedy_gap:.4f}, "
          f"distinct top-1 ids {len({p['top_ids'][0] for p in positions})}, "
          f"max |logit| per position median {float(mags.median()):.1f} max {float(mags.max()):.1f}, "
          f"generated {generated}" + ("" if min_router_gap is None else f", min router gap {min_router_gap:.4f}"))
    return (min_gap >= MIN_GAP and min_greedy_gap >= MIN_GAP
            and (min_router_gap is None or min_router_gap >= MIN_ROUTER_GAP))


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    ok = True
    for directory in argv:
        if not make_golden(directory):
            print(f"{directory}: logits too close (< {MIN_GAP}); pick another seed", file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
