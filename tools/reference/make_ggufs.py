#!/usr/bin/python3
"""Makes models/q-moe, the held-out models/q-moe-heldout and models/q-dense-heldout: a synthetic Qwen3-MoE (or, for
a preset without experts, dense Qwen3) checkpoint in q-tied's style, its bf16 GGUF (architecture qwen3moe or qwen3,
by to_gguf.py), llama.cpp's own quantizations of it, an importance matrix, and float64 goldens of every file's exact
dequantized weights.

    PYTHONPATH=/root/peers/llama.cpp/gguf-py /usr/bin/python3 tools/reference/make_ggufs.py q-moe models/q-moe
    PYTHONPATH=... /usr/bin/python3 tools/reference/make_ggufs.py q-moe-heldout models/q-moe-heldout
    PYTHONPATH=... /usr/bin/python3 tools/reference/make_ggufs.py q-dense-heldout models/q-dense-heldout
    PYTHONPATH=... /usr/bin/python3 tools/reference/make_ggufs.py --golden models/q-moe/model-Q4_0.gguf  # print

Needs a llama.cpp build (LLAMA_BIN, default /root/peers/llama.cpp/build/bin: llama-quantize, llama-imatrix) and its
gguf-py (on PYTHONPATH, or GGUF_PY) for the reference dequantization. Steps, in a work directory (--work, default a
fresh one under /tmp):

1. checkpoint/: config.json (model_type qwen3_moe, or qwen3), generation_config.json and the tokenizer of models/q-tied (vocab
   8064, bos 8000, eos 8002), bf16 model.safetensors. Weights as q-tied's: projections N(0, 1/fan_in) with 2% of the
   entries six times larger, RMSNorm weights 1 + N(0, 0.1^2) with 1 in 64 channels (at least one) multiplied by 8,
   embedding (and an untied output) N(0, 0.05^2), router N(0, 4/hidden). A dense preset's MLP projections as the
   other projections.
2. model-BF16.gguf: to_gguf.py of it.
3. imatrix.gguf: llama-imatrix -m model-BF16.gguf -f TEXT -o imatrix.gguf -c 128 --chunks 8 -t 2 --no-ppl
4. model-T.gguf: llama-quantize [--imatrix imatrix.gguf] model-BF16.gguf model-T.gguf T 2 (the imatrix for IQ2_XXS
   only, which cannot do without one).
5. golden-T.json per file (q-tied's layout) and golden.json for the bf16 checkpoint (q-tied's golden.json layout).

Only the files of the preset's `keep` types are copied to the output directory (with the goldens of those types),
plus config.json, generation_config.json, the tokenizer files, tokens.txt and imatrix.gguf.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.environ.get("GGUF_PY", "/root/peers/llama.cpp/gguf-py"))
from make_checkpoint import LazyTensor, attention_weights, bf16_bytes, write_safetensors  # noqa: E402
from qwen3_reference import Qwen3Reference, load_checkpoint, router_gap  # noqa: E402

LLAMA_BIN = os.environ.get("LLAMA_BIN", "/root/peers/llama.cpp/build/bin")
Q_TIED = os.path.join(REPO, "models", "q-tied")
IMATRIX_TEXT = "/work/shared/trained/eval.txt"
TYPES = ["BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q2_K", "IQ2_XXS"]
NEEDS_IMATRIX = {"IQ2_XXS"}
GREEDY_STEPS = 8

PRESETS = {
    # every matrix row 256 long: one K-quant super-block per row
    "q-moe": dict(hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64, experts=8, top_k=3, moe_intermediate=256,
                  tied=True, seed=8, keep=TYPES),
    # rows of 512 (two super-blocks) for every matrix but ffn_down_exps, 16 experts, top 4, untied; too big to keep
    # every type (bf16 alone is ~59 MB), so only the files in `keep` are committed
    "q-moe-heldout": dict(hidden=512, layers=3, heads=8, kv_heads=4, head_dim=64, experts=16, top_k=4,
                          moe_intermediate=256, tied=False, seed=5, keep=["Q4_K_M", "Q2_K", "IQ2_XXS"]),
    # dense, unlike q-tied (tied, 4 heads of 128 over 2 kv heads, intermediate 768): untied, a GQA group of 4,
    # heads of 64, 3 layers, ffn_down rows of 512 (two super-blocks); keeps the two types whose matmuls take Q8_0
    # activation blocks (Q8_0, Q4_0: the native kernels round them as llama.cpp does); seed 1, the first tried
    "q-dense-heldout": dict(hidden=256, layers=3, heads=8, kv_heads=2, head_dim=64, intermediate=512, tied=False,
                            seed=1, keep=["Q8_0", "Q4_0"]),
}

HEAVY_FRACTION = 0.02
HEAVY_FACTOR = 6.0
OUTLIER_EVERY = 64
OUTLIER_FACTOR = 8.0
EMBEDDING_STD = 0.05
ROUTER_LOGIT_STD = 2.0


# ---------------------------------------------------------------------------------------------------------- checkpoint

def eager(tensor):
    """A LazyTensor over an in-memory float32 tensor (bf16-rounded when written)."""
    return LazyTensor(list(tensor.shape), lambda: [bf16_bytes(tensor.reshape(tensor.shape[0], -1))])


def make_weights(spec):
    seeds = iter(range(spec["seed"] * 1000003 + 500000, spec["seed"] * 1000003 + 600000))
    h, hd = spec["hidden"], spec["head_dim"]
    q_dim, kv_dim = spec["heads"] * hd, spec["kv_heads"] * hd
    vocab = json.load(open(os.path.join(Q_TIED, "config.json")))["vocab_size"]
    w = {}

    def gen():
        return torch.Generator().manual_seed(next(seeds))

    def linear(name, out_features, in_features):
        g = gen()
        x = torch.randn(out_features, in_features, generator=g) * in_features ** -0.5
        heavy = torch.rand(out_features, in_features, generator=g) < HEAVY_FRACTION
        w[name] = eager(torch.where(heavy, x * HEAVY_FACTOR, x))

    def norm(name, n):
        g = gen()
        x = 1.0 + 0.1 * torch.randn(n, generator=g)
        outliers = torch.randperm(n, generator=g)[:max(1, n // OUTLIER_EVERY)]
        x[outliers] *= OUTLIER_FACTOR
        w[name] = eager(x)

    w["model.embed_tokens.weight"] = eager(torch.randn(vocab, h, generator=gen()) * EMBEDDING_STD)
    for i in range(spec["layers"]):
        p = f"model.layers.{i}."
        attention_weights(p, h, q_dim, kv_dim, hd, norm, linear)
        if "experts" not in spec:
            linear(p + "mlp.gate_proj.weight", spec["intermediate"], h)
            linear(p + "mlp.up_proj.weight", spec["intermediate"], h)
            linear(p + "mlp.down_proj.weight", h, spec["intermediate"])
            continue
        width = spec["moe_intermediate"]
        w[p + "mlp.gate.weight"] = eager(torch.randn(spec["experts"], h, generator=gen()) * ROUTER_LOGIT_STD * h ** -0.5)
        for e in range(spec["experts"]):
            x = f"{p}mlp.experts.{e}."
            linear(x + "gate_proj.weight", width, h)
            linear(x + "up_proj.weight", width, h)
            linear(x + "down_proj.weight", h, width)
    norm("model.norm.weight", h)
    if not spec["tied"]:
        w["lm_head.weight"] = eager(torch.randn(vocab, h, generator=gen()) * EMBEDDING_STD)
    return w


def config_json(spec):
    """q-tied's config.json fields with the preset's shapes, and Qwen3-MoE's (as Qwen3-30B-A3B's config.json has them)
    for an MoE preset."""
    with open(os.path.join(Q_TIED, "config.json")) as f:
        base = json.load(f)
    config = dict(base)
    if "experts" not in spec:
        config.update({
            "max_window_layers": spec["layers"],
            "hidden_size": spec["hidden"],
            "num_hidden_layers": spec["layers"],
            "num_attention_heads": spec["heads"],
            "num_key_value_heads": spec["kv_heads"],
            "head_dim": spec["head_dim"],
            "intermediate_size": spec["intermediate"],
            "tie_word_embeddings": spec["tied"],
        })
        return config
    config.update({
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "max_window_layers": spec["layers"],
        "hidden_size": spec["hidden"],
        "num_hidden_layers": spec["layers"],
        "num_attention_heads": spec["heads"],
        "num_key_value_heads": spec["kv_heads"],
        "head_dim": spec["head_dim"],
        "intermediate_size": spec["moe_intermediate"] * spec["top_k"],  # unused: no dense layer
        "moe_intermediate_size": spec["moe_intermediate"],
        "num_experts": spec["experts"],
        "num_experts_per_tok": spec["top_k"],
        "norm_topk_prob": True,
        "output_router_logits": False,
        "router_aux_loss_coef": 0.001,
        "tie_word_embeddings": spec["tied"],
    })
    return config


def write_checkpoint(directory, spec):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config_json(spec), f, indent=2)
        f.write("\n")
    for name in ("generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(Q_TIED, name), os.path.join(directory, name))
    write_safetensors(os.path.join(directory, "model.safetensors"), make_weights(spec))


# ---------------------------------------------------------------------------------------------------------- gguf

def gguf_model(path, types=None):
    """(config, weights) in Hugging Face names and float64 from a qwen3 / qwen3moe GGUF file: every tensor dequantized
    exactly as gguf-py (llama.cpp's reference decoder) does, the expert stacks split back into experts. A dict given
    as `types` gets each weight's ggml type name in the file (Q8_0, F32, ...) under the same names."""
    import gguf
    reader = gguf.GGUFReader(path)

    def field(key):
        f = reader.fields[key]
        return f.contents() if hasattr(f, "contents") else f.parts[f.data[0]][0]

    arch = field("general.architecture")
    a = arch
    tensors, stored = {}, {}
    for t in reader.tensors:
        stored[t.name] = t.tensor_type.name
        if t.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            values = np.asarray(t.data, dtype=np.float64)
        else:
            values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64)
        tensors[t.name] = torch.from_numpy(values.reshape([int(d) for d in reversed(t.shape.tolist())]).copy())
    layers = int(field(f"{a}.block_count"))
    config = {
        "model_type": "qwen3_moe" if arch == "qwen3moe" else "qwen3",
        "hidden_size": int(field(f"{a}.embedding_length")),
        "num_hidden_layers": layers,
        "num_attention_heads": int(field(f"{a}.attention.head_count")),
        "num_key_value_heads": int(field(f"{a}.attention.head_count_kv")),
        "head_dim": int(field(f"{a}.attention.key_length")),
        "rms_norm_eps": float(field(f"{a}.attention.layer_norm_rms_epsilon")),  # as stored: f32
        "rope_theta": float(field(f"{a}.rope.freq_base")),
        "max_position_embeddings": int(field(f"{a}.context_length")),
        "rope_scaling": None,
        "vocab_size": tensors["token_embd.weight"].shape[0],
        "tie_word_embeddings": "output.weight" not in tensors,
    }
    if arch == "qwen3moe":
        config.update({"num_experts": int(field(f"{a}.expert_count")),
                       "num_experts_per_tok": int(field(f"{a}.expert_used_count")),
                       "moe_intermediate_size": int(field(f"{a}.expert_feed_forward_length")),
                       "norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": []})
    names = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
             "attn_k_norm": "self_attn.k_norm", "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj",
             "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj", "ffn_gate_inp": "mlp.gate"}
    stacks = {"ffn_gate_exps": "gate_proj", "ffn_up_exps": "up_proj", "ffn_down_exps": "down_proj"}
    weights = {}
    for name, value in tensors.items():
        if name == "token_embd.weight":
            hf = {"model.embed_tokens.weight": value}
        elif name == "output_norm.weight":
            hf = {"model.norm.weight": value}
        elif name == "output.weight":
            hf = {"lm_head.weight": value}
        else:
            _, layer, kind, _ = name.split(".")
            if kind in stacks:
                hf = {f"model.layers.{layer}.mlp.experts.{e}.{stacks[kind]}.weight": value[e]
                      for e in range(value.shape[0])}
            else:
                hf = {f"model.layers.{layer}.{names[kind]}.weight": value}
        weights.update(hf)
        if types is not None:
            types.update({key: stored[name] for key in hf})
    return config, weights


# ---------------------------------------------------------------------------------------------------------- goldens

def tokens():
    with open(os.path.join(Q_TIED, "tokens.txt")) as f:
        return [int(t) for t in f.read().split(",")]


def run_reference(config, weights):
    """(logits [48, vocab], greedy ids, greedy margins, min router gap) for tokens.txt."""
    ids = tokens()
    model = Qwen3Reference(config, weights)
    model.router_log = []
    logits = model.logits(ids)
    cache = model.new_cache()
    last = model.forward(ids, cache)[-1]
    generated, margins = [], []
    for _ in range(GREEDY_STEPS):
        top = torch.topk(last, 2)
        generated.append(int(top.indices[0]))
        margins.append(float(top.values[0] - top.values[1]))
        last = model.forward([generated[-1]], cache)[-1]
    gaps = [float(router_gap(r, model.top_k).min()) for _, r in model.router_log]
    return ids, logits, generated, margins, (min(gaps) if gaps else None)


def top5(logits, extra=False):
    positions = []
    for row in logits:
        top = torch.topk(row, 5)
        entry = {"top_ids": top.indices.tolist(), "top_logits": top.values.tolist()}
        if extra:
            entry["sum"] = float(row.sum())
            entry["sumsq"] = float((row * row).sum())
        positions.append(entry)
    return positions


def top_gap(logits, k=6):
    values = torch.topk(logits, k, dim=-1).values
    return float((values[:, :-1] - values[:, 1:]).min())


def golden_for_gguf(path):
    config, weights = gguf_model(path)
    ids, logits, generated, margins, router = run_reference(config, weights)
    golden = {"gguf": os.path.basename(path), "tokens": ids, "positions": top5(logits), "greedy": generated}
    stats = {"min_top5_gap": top_gap(logits, 5), "min_top6_gap": top_gap(logits, 6),
             "min_greedy_margin": min(margins), "min_router_gap": router}
    return golden, stats


def golden_for_checkpoint(directory):
    ids, logits, generated, margins, router = run_reference(*load_checkpoint(directory))
    golden = {"tokens": ids, "positions": top5(logits, extra=True), "greedy": generated, "greedy_margins": margins}
    stats = {"min_top5_gap": top_gap(logits, 5), "min_top6_gap": top_gap(logits, 6),
             "min_greedy_margin": min(margins), "min_router_gap": router}
    return golden, stats


def write_golden(path, golden):
    with open(path, "w") as f:
        json.dump(golden, f, indent=1)  # q-tied's: indent 1, no final newline


# ---------------------------------------------------------------------------------------------------------- main

def run(command, log):
    print("+ " + " ".join(command), file=sys.stderr)
    with open(log, "a") as f:
        f.write("+ " + " ".join(command) + "\n")
        f.flush()
        subprocess.run(command, check=True, stdout=f, stderr=subprocess.STDOUT)


def make(preset, out, work, seed=None, imatrix_text=IMATRIX_TEXT):
    spec = dict(PRESETS[preset])
    if seed is not None:
        spec["seed"] = seed
    checkpoint = os.path.join(work, "checkpoint")
    write_checkpoint(checkpoint, spec)
    log = os.path.join(work, "llama.log")
    bf16 = os.path.join(work, "model-BF16.gguf")
    subprocess.run([sys.executable, os.path.join(HERE, "to_gguf.py"), checkpoint, bf16], check=True)
    imatrix = os.path.join(work, "imatrix.gguf")
    run([os.path.join(LLAMA_BIN, "llama-imatrix"), "-m", bf16, "-f", imatrix_text, "-o", imatrix, "-c", "128",
         "--chunks", "8", "-t", "2", "--no-ppl"], log)
    for t in TYPES[1:]:
        command = [os.path.join(LLAMA_BIN, "llama-quantize")]
        if t in NEEDS_IMATRIX:
            command += ["--imatrix", imatrix]
        run(command + [bf16, os.path.join(work, f"model-{t}.gguf"), t, "2"], log)

    summary = {}
    golden, stats = golden_for_checkpoint(checkpoint)
    write_golden(os.path.join(work, "golden.json"), golden)
    summary["checkpoint"] = stats
    for t in TYPES:
        golden, stats = golden_for_gguf(os.path.join(work, f"model-{t}.gguf"))
        write_golden(os.path.join(work, f"golden-{t}.json"), golden)
        stats["bytes"] = os.path.getsize(os.path.join(work, f"model-{t}.gguf"))
        summary[t] = stats
        print(f"{preset} {t}: {json.dumps(stats)}", file=sys.stderr)

    os.makedirs(out, exist_ok=True)
    for name in ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(checkpoint, name), os.path.join(out, name))
    shutil.copyfile(os.path.join(Q_TIED, "tokens.txt"), os.path.join(out, "tokens.txt"))
    shutil.copyfile(imatrix, os.path.join(out, "imatrix.gguf"))
    shutil.copyfile(os.path.join(work, "golden.json"), os.path.join(out, "golden.json"))
    for t in spec["keep"]:
        for name in (f"model-{t}.gguf", f"golden-{t}.json"):
            shutil.copyfile(os.path.join(work, name), os.path.join(out, name))
    with open(os.path.join(work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--golden", metavar="GGUF", help="print the golden of one GGUF file and its margins")
    parser.add_argument("--work", help="work directory (kept); default a new one under /tmp")
    parser.add_argument("--seed", type=int, help="override the preset's seed")
    parser.add_argument("preset", nargs="?", choices=sorted(PRESETS))
    parser.add_argument("out", nargs="?")
    args = parser.parse_args(argv)
    if args.golden:
        golden, stats = golden_for_gguf(args.golden)
        print(json.dumps(golden))
        print(json.dumps(stats), file=sys.stderr)
        return 0
    if not args.preset or not args.out:
        parser.error("PRESET and OUT are required")
    work = args.work or tempfile.mkdtemp(prefix=f"{args.preset}-")
    make(args.preset, args.out, work, args.seed)
    print(f"work files in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
