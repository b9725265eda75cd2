#!/usr/bin/python3
"""What rounding the matmuls' inputs does to a GGUF file's logits: the float64 reference of the file's exact weights
(make_ggufs.py's gguf_model, qwen3_reference.py) with every input of a matmul whose weight is quantized replaced by
the values its int8 blocks stand for, against the file's golden-T.json (and over the ids llama-T.json has, as
NativeDenseGoldenTest counts them), beside llama.cpp's own distance.

    PYTHONPATH=/root/peers/llama.cpp/gguf-py /usr/bin/python3 tools/reference/activation_rounding.py \\
        [--rounding NAME]... [--by-op] DIR TYPE

Roundings (--rounding, repeatable; default q8_0 and q8_0-groups4):

- q8_0: what llama.cpp and the native kernels do for Q8_0 and Q4_0 weights (native/cpu/README.md "Arithmetic"):
  per block of 32, amax = max |x|, q = round-half-even(x · (127 / amax)) in float32, d = f16(amax / 127); K-quant
  weights get the native kernels' Q8_K (per 256, d = amax / 2032, per chunk of 32 a multiple
  m_c = max(1, ⌈16·amax_c / amax⌉) of it).
- q8_0-groups4: the same, but Q8_0 activations in Q8_K's way at a finer grain: per block of 32, d = amax / 2032
  (float32) and per group of 4 values (one int32 lane of the kernels' dot products) a multiple
  m_g = max(1, ⌈16·amax_g / amax⌉), q = round-half-even(x · (2032 / (amax·m_g))), standing for d·m_g·q.
- q8_0-blocksN (N = 4, 8, 16, 64): a step of amax/127 per N values (float32 d), for comparison.

--by-op rounds one kind of matmul at a time (each layer's q, k, v, o, gate, up, down, and the output projection),
the others exact: which inputs the distance comes from.
"""
import argparse
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_ggufs import gguf_model, tokens  # noqa: E402
from qwen3_reference import Qwen3Reference  # noqa: E402

BLOCK_32_TYPES = {"Q8_0", "Q4_0"}
EXACT_TYPES = {"F32", "F16", "BF16"}


def q8_0(x):
    b = x.reshape(-1, 32).to(torch.float32)
    amax = b.abs().max(dim=1, keepdim=True).values
    q = torch.round(b * torch.where(amax > 0, 127.0 / amax, torch.zeros_like(amax)))
    return (q.double() * (amax / 127.0).half().double()).reshape(x.shape)


def multiples(x, block, group):
    """Per block, d = amax / 2032; per group, a multiple m = max(1, ⌈16·amax_g / amax⌉) of it: d·m·q, |q| ≤ 127."""
    b = x.reshape(-1, block).to(torch.float32)
    amax = b.abs().max(dim=1, keepdim=True).values[:, :, None]
    g = b.reshape(b.shape[0], -1, group)
    safe = torch.where(amax > 0, amax, torch.ones_like(amax))
    m = torch.clamp(torch.ceil(16 * g.abs().max(dim=2, keepdim=True).values / safe), min=1)
    q = torch.round(g * (2032.0 / (safe * m)))
    value = q.double() * (safe.double() / 2032.0) * m.double()
    return torch.where(amax > 0, value, torch.zeros_like(value)).reshape(x.shape)


def blocks(x, n):
    b = x.reshape(-1, n).to(torch.float32)
    amax = b.abs().max(dim=1, keepdim=True).values
    q = torch.round(b * torch.where(amax > 0, 127.0 / amax, torch.zeros_like(amax)))
    return (q.double() * (amax / 127.0).double()).reshape(x.shape)


def q8_k(x):
    return multiples(x, 256, 32)


ROUNDINGS = {
    "q8_0": q8_0,
    "q8_0-groups4": lambda x: multiples(x, 32, 4),
    **{f"q8_0-blocks{n}": (lambda x, n=n: blocks(x, n)) for n in (4, 8, 16, 64)},
}


def rounding(types, block_32, only=None):
    """round_input for Qwen3Reference: block_32 for Q8_0 / Q4_0 weights, Q8_K for the others quantized, nothing for
    float ones; with `only` (layer, projection), just that weight's input (layer None: the output projection)."""
    def round_input(name, x):
        kind = types[name if name in types else "model.embed_tokens.weight"]  # a tied output projection's
        if kind in EXACT_TYPES or only is not None and not op_is(name, *only):
            return x
        return block_32(x) if kind in BLOCK_32_TYPES else q8_k(x)
    return round_input


def op_is(name, layer, projection):
    if layer is None:
        return name == "lm_head.weight"
    return name.startswith(f"model.layers.{layer}.") and name.endswith(f".{projection}.weight")


def positions(path):
    with open(path) as f:
        return [dict(zip(p["top_ids"], p["top_logits"])) for p in json.load(f)["positions"]]


def distance(golden, logits, only=None):
    """Largest and RMS |logit − golden| over the golden's top ids (those `only` has too, when given)."""
    worst, squares, count = 0.0, 0.0, 0
    for i, top in enumerate(golden):
        for token, value in top.items():
            if only is not None and token not in only[i]:
                continue
            got = logits[i].get(token) if isinstance(logits[i], dict) else float(logits[i][token])
            if got is None:
                continue
            worst = max(worst, abs(got - value))
            squares += (got - value) ** 2
            count += 1
    return worst, math.sqrt(squares / max(count, 1))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounding", action="append", choices=sorted(ROUNDINGS))
    parser.add_argument("--by-op", action="store_true")
    parser.add_argument("dir")
    parser.add_argument("type")
    args = parser.parse_args(argv)
    types = {}
    config, weights = gguf_model(os.path.join(args.dir, f"model-{args.type}.gguf"), types)
    if config["model_type"] != "qwen3":
        parser.error(f"{args.dir}/model-{args.type}.gguf: a dense qwen3 file, not {config['model_type']}")
    golden = positions(os.path.join(args.dir, f"golden-{args.type}.json"))
    llama = positions(os.path.join(args.dir, f"llama-{args.type}.json"))
    model = Qwen3Reference(config, weights)
    ids = tokens()

    def report(label, logits):
        a, b = distance(golden, logits), distance(golden, logits, llama)
        print(f"{label:40s} max {a[0]:.4f} rms {a[1]:.4f}   over llama's ids: max {b[0]:.4f} rms {b[1]:.4f}")

    l = distance(golden, llama)
    print(f"{'llama.cpp':40s} max {l[0]:.4f} rms {l[1]:.4f}")
    ops = [(layer, op) for layer in range(config["num_hidden_layers"])
           for op in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")] + [(None, "lm_head")]
    for name in args.rounding or ["q8_0", "q8_0-groups4"]:
        model.round_input = rounding(types, ROUNDINGS[name])
        report(name, model.logits(ids))
        for op in ops if args.by_op else []:
            model.round_input = rounding(types, ROUNDINGS[name], op)
            report(f"  {name}, only {op[1]}" + ("" if op[0] is None else f" of layer {op[0]}"), model.logits(ids))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
