#!/usr/bin/python3
"""Writes the MoE CPU benchmark model: Qwen3-30B-A3B's decoder layer exactly (hidden 2048, 32 query / 4 KV heads of
128, 128 experts, top 8, moe_intermediate 768, rms eps 1e-6, rope theta 1e6, untied output head) in a checkpoint of
LAYERS (default 6) layers with q-tied's 8,064-token vocabulary and tokenizer, seeded random bf16 weights in
make_ggufs.py's style (projections N(0, 1/fan_in) with 2% of the entries six times larger, norms 1 + N(0, 0.1^2),
embedding / head N(0, 0.05^2), router N(0, 4/hidden)), generated lazily in row chunks so that the ~7 GB checkpoint
never sits in memory.

    /usr/bin/python3 tools/peer/make_moe_bench_model.py CHECKPOINT_DIR [LAYERS]

tools/peer/make-moe-bench-model.sh wraps it: checkpoint -> to_gguf.py (qwen3moe BF16 GGUF) -> llama-quantize.
"""
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "reference"))
from make_checkpoint import LazyTensor, attention_weights, bf16_bytes, write_safetensors  # noqa: E402
from make_ggufs import (Q_TIED, HEAVY_FRACTION, HEAVY_FACTOR, OUTLIER_EVERY, OUTLIER_FACTOR,  # noqa: E402
                        EMBEDDING_STD, ROUTER_LOGIT_STD, config_json)

SPEC = dict(hidden=2048, layers=6, heads=32, kv_heads=4, head_dim=128, experts=128, top_k=8, moe_intermediate=768,
            tied=False, seed=30)
CHUNK = 1 << 22  # floats per generated chunk


def lazy(shape, seed, make):
    """LazyTensor of shape [rows, width]; make(generator, rows, width) -> float32 block, in row chunks."""
    rows, width = shape

    def chunks():
        g = torch.Generator().manual_seed(seed)
        step = max(1, CHUNK // width)
        for begin in range(0, rows, step):
            yield bf16_bytes(make(g, min(rows, begin + step) - begin, width))

    return LazyTensor(shape, chunks)


def projection(g, rows, width):
    x = torch.randn(rows, width, generator=g) * width ** -0.5
    heavy = torch.rand(rows, width, generator=g) < HEAVY_FRACTION
    return torch.where(heavy, x * HEAVY_FACTOR, x)


def make_weights(spec):
    seeds = iter(range(spec["seed"] * 1000003 + 700000, spec["seed"] * 1000003 + 900000))
    h, hd, width = spec["hidden"], spec["head_dim"], spec["moe_intermediate"]
    q_dim, kv_dim = spec["heads"] * hd, spec["kv_heads"] * hd
    vocab = json.load(open(os.path.join(Q_TIED, "config.json")))["vocab_size"]
    w = {}

    def linear(name, out_features, in_features):
        w[name] = lazy([out_features, in_features], next(seeds), projection)

    def norm(name, n):
        g = torch.Generator().manual_seed(next(seeds))
        x = 1.0 + 0.1 * torch.randn(n, generator=g)
        x[torch.randperm(n, generator=g)[:max(1, n // OUTLIER_EVERY)]] *= OUTLIER_FACTOR
        w[name] = LazyTensor([n], lambda x=x: [bf16_bytes(x.reshape(1, -1))])

    def normal(name, rows, cols, std):
        w[name] = lazy([rows, cols], next(seeds), lambda g, r, c: torch.randn(r, c, generator=g) * std)

    normal("model.embed_tokens.weight", vocab, h, EMBEDDING_STD)
    for i in range(spec["layers"]):
        p = f"model.layers.{i}."
        attention_weights(p, h, q_dim, kv_dim, hd, norm, linear)
        normal(p + "mlp.gate.weight", spec["experts"], h, ROUTER_LOGIT_STD * h ** -0.5)
        for e in range(spec["experts"]):
            x = f"{p}mlp.experts.{e}."
            linear(x + "gate_proj.weight", width, h)
            linear(x + "up_proj.weight", width, h)
            linear(x + "down_proj.weight", h, width)
    norm("model.norm.weight", h)
    normal("lm_head.weight", vocab, h, EMBEDDING_STD)
    return w


def main(argv):
    if not argv or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    spec = dict(SPEC)
    if len(argv) == 2:
        spec["layers"] = int(argv[1])
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    config = config_json(spec)
    config["intermediate_size"] = 6144  # Qwen3-30B-A3B's (unused: no dense layer)
    config["rms_norm_eps"] = 1e-6
    config["rope_theta"] = 1000000
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    for name in ("generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(Q_TIED, name), os.path.join(out, name))
    size = write_safetensors(os.path.join(out, "model.safetensors"), make_weights(spec))
    print(f"{out}: {spec['layers']} layers, {size} bytes of bf16", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
