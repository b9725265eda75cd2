#!/usr/bin/python3
"""Writes synthetic Qwen3 (and Qwen3-MoE: preset tiny-moe) checkpoints laid out exactly like a Hugging Face one: config.json, generation_config.json,
bf16 model.safetensors (or shards plus model.safetensors.index.json), and the real Qwen3 tokenizer files.

    python3 tools/reference/make_checkpoint.py --preset tiny-tied models/tiny-tied
    python3 tools/reference/make_checkpoint.py --all models            # the committed test checkpoints
    python3 tools/reference/make_checkpoint.py --full models/full      # Qwen3-0.6B-shaped, random, ~1.2 GB

Weights are seeded random bf16. Scales keep activations O(1) (projections ~ N(0, 1/fan_in), norm weights ~ 1) and
make the top logits well separated, so a test can compare top-k ids at every position: each output row (lm_head,
or the embedding when tied) is scaled by a log-normal factor, giving the logits a heavy upper tail.
"""
import argparse
import json
import os
import shutil
import struct
import sys

import torch

VOCAB = 151936
TOKENIZER_DIR = "/work/shared/qwen3"

# The committed test checkpoints. "lm_head": absent (tied, no lm_head.weight), copy (tied, lm_head.weight present and
# equal to the embedding, as Qwen3-0.6B ships), own (untied, its own lm_head.weight). Seeds were picked so that every
# golden position has top-6 logit gaps above 1e-2 (make_goldens.py checks and fails otherwise).
PRESETS = {
    "tiny-tied": dict(hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, intermediate=128,
                      lm_head="absent", shards=1, seed=9),
    "tiny-untied": dict(hidden=32, layers=2, heads=4, kv_heads=2, head_dim=20, intermediate=96,
                        lm_head="own", shards=1, seed=6),
    "tiny-tied-head-sharded": dict(hidden=32, layers=3, heads=8, kv_heads=2, head_dim=8, intermediate=64,
                                   lm_head="copy", shards=2, seed=1),
}
# Qwen3-Embedding and Qwen3-Reranker as they ship, in tiny shapes. "bare": tensors of a Qwen3Model, named without
# "model." and without lm_head (lm_head "none" with tie false: Qwen3-Embedding-8B's config; "absent": 0.6B's);
# "pooling": sentence-transformers' 1_Pooling/config.json (last token), and tokenizer.json's post_processor appends
# <|endoftext|> as Qwen3-Embedding's does. The rerankers are plain Qwen3ForCausalLM checkpoints. The *-heldout pair
# has other shapes and seeds.
PRESETS.update({
    "tiny-embed": dict(hidden=16, layers=2, heads=2, kv_heads=1, head_dim=8, intermediate=48,
                       lm_head="absent", shards=1, seed=21, bare=True, pooling=True, embedding=True),
    "tiny-embed-heldout": dict(hidden=24, layers=3, heads=3, kv_heads=1, head_dim=10, intermediate=40,
                               lm_head="none", shards=1, seed=22, bare=True, pooling=False, embedding=True),
    "tiny-rerank": dict(hidden=16, layers=2, heads=2, kv_heads=1, head_dim=8, intermediate=48,
                        lm_head="absent", shards=1, seed=23),
    "tiny-rerank-heldout": dict(hidden=24, layers=3, heads=4, kv_heads=2, head_dim=6, intermediate=40,
                                lm_head="absent", shards=1, seed=24),
})
# Qwen3-MoE (Qwen3MoeForCausalLM): experts / top_k / moe_intermediate as Qwen3MoeConfig's num_experts /
# num_experts_per_tok / moe_intermediate_size; layers in mlp_only keep a dense MLP of `intermediate`. The seed was
# picked so that make_goldens.py also finds every routing decision at least 1e-3 (router logit) from a tie.
MOE_PRESETS = {
    "tiny-moe": dict(hidden=64, layers=3, heads=4, kv_heads=2, head_dim=16, intermediate=96,
                     experts=8, top_k=3, moe_intermediate=32, sparse_step=1, mlp_only=[1], norm_topk=True,
                     lm_head="absent", shards=2, seed=15),
}
PRESETS.update(MOE_PRESETS)
FULL = dict(hidden=1024, layers=28, heads=16, kv_heads=8, head_dim=128, intermediate=3072,
            lm_head="absent", shards=1, seed=0)

# Output rows are N(0, OUTPUT_ROW_STD^2) * exp(ROW_SCALE_SIGMA * N(0, 1)); the final norm weight sets the typical
# logit size. A tied embedding is also the input, so its rows are kept small (like real embeddings, ~0.02) for the
# layers' outputs to outweigh them in the residual stream; otherwise each token would mostly predict itself.
ROW_SCALE_SIGMA = 1.0
TYPICAL_LOGIT = 2.0
TIED_ROW_STD = 0.005
# Router rows ~ N(0, ROUTER_LOGIT_STD^2 / hidden): router logits of a normed hidden state spread ~ N(0, 2^2), so the
# k-th and (k+1)-th expert are usually far apart and the choice does not hinge on rounding.
ROUTER_LOGIT_STD = 2.0


# ---------------------------------------------------------------------------------------------------------- safetensors

class LazyTensor:
    """A bf16 tensor whose bytes are produced on demand, so a 1 GB checkpoint never sits in memory at once."""

    def __init__(self, shape, chunks):
        self.shape = list(shape)
        self.chunks = chunks  # callable returning an iterable of bytes

    @property
    def nbytes(self):
        n = 2
        for d in self.shape:
            n *= d
        return n


def write_safetensors(path, tensors):
    """tensors: name -> LazyTensor (bf16). Header: u64 LE length, JSON sorted by name, padded with spaces to 8."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        header[name] = {"dtype": "BF16", "shape": t.shape, "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in sorted(tensors):
            written = 0
            for chunk in tensors[name].chunks():
                f.write(chunk)
                written += len(chunk)
            assert written == tensors[name].nbytes, name
    return offset


def bf16_bytes(t):
    """float32 tensor -> little-endian bf16 bytes, rounded to nearest even by torch."""
    return t.to(torch.bfloat16).view(torch.int16).numpy().tobytes()


# ---------------------------------------------------------------------------------------------------------- weights

def random_tensor(shape, seed, scale=1.0, offset=0.0, row_scales=None):
    """N(offset, scale^2) entries (rows multiplied by row_scales) from its own seeded generator, in row chunks."""

    def chunks():
        g = torch.Generator().manual_seed(seed)
        rows = shape[0]
        width = 1
        for d in shape[1:]:
            width *= d
        step = max(1, (1 << 24) // max(width, 1))
        for begin in range(0, rows, step):
            end = min(rows, begin + step)
            block = torch.randn(end - begin, width, generator=g, dtype=torch.float32) * scale + offset
            if row_scales is not None:
                block *= row_scales[begin:end, None]
            yield bf16_bytes(block)

    return LazyTensor(shape, chunks)


def is_moe_layer(spec, layer):
    """Qwen3MoeDecoderLayer's rule (see qwen3_reference.is_moe_layer), on a preset."""
    return (spec.get("experts", 0) > 0 and layer not in spec.get("mlp_only", [])
            and (layer + 1) % spec.get("sparse_step", 1) == 0)


def attention_weights(p, h, q_dim, kv_dim, hd, norm, linear):
    """A Qwen3 layer's attention weights and both its norms, under prefix p, in the order every generator draws them
    (the seeds follow that order, so it fixes the weights)."""
    norm(p + "input_layernorm.weight", h)
    linear(p + "self_attn.q_proj.weight", q_dim, h)
    linear(p + "self_attn.k_proj.weight", kv_dim, h)
    linear(p + "self_attn.v_proj.weight", kv_dim, h)
    linear(p + "self_attn.o_proj.weight", h, q_dim)
    norm(p + "self_attn.q_norm.weight", hd)
    norm(p + "self_attn.k_norm.weight", hd)
    norm(p + "post_attention_layernorm.weight", h)


def make_weights(spec):
    """name -> LazyTensor for a Qwen3ForCausalLM with the shapes in spec."""
    h, inter, hd = spec["hidden"], spec["intermediate"], spec["head_dim"]
    q_dim, kv_dim = spec["heads"] * hd, spec["kv_heads"] * hd
    seeds = iter(range(spec["seed"] * 1000003, spec["seed"] * 1000003 + 100000))
    g = torch.Generator().manual_seed(next(seeds))
    row_scales = torch.exp(ROW_SCALE_SIGMA * torch.randn(VOCAB, generator=g, dtype=torch.float32))
    w = {}

    def norm(name, n):
        w[name] = random_tensor([n], next(seeds), scale=0.1, offset=1.0)

    def linear(name, out_features, in_features):
        w[name] = random_tensor([out_features, in_features], next(seeds), scale=in_features ** -0.5)

    tied = spec["lm_head"] in ("absent", "copy")  # "none": untied and no lm_head (a bare embedding model)
    output_row_std = TIED_ROW_STD if tied else 1.0
    w["model.embed_tokens.weight"] = random_tensor([VOCAB, h], next(seeds), scale=output_row_std,
                                                   row_scales=row_scales if tied else None)
    for i in range(spec["layers"]):
        p = f"model.layers.{i}."
        attention_weights(p, h, q_dim, kv_dim, hd, norm, linear)
        if is_moe_layer(spec, i):
            w[p + "mlp.gate.weight"] = random_tensor([spec["experts"], h], next(seeds),
                                                     scale=ROUTER_LOGIT_STD * h ** -0.5)
            for e in range(spec["experts"]):
                x = f"{p}mlp.experts.{e}."
                linear(x + "gate_proj.weight", spec["moe_intermediate"], h)
                linear(x + "up_proj.weight", spec["moe_intermediate"], h)
                linear(x + "down_proj.weight", h, spec["moe_intermediate"])
        else:
            linear(p + "mlp.gate_proj.weight", inter, h)
            linear(p + "mlp.up_proj.weight", inter, h)
            linear(p + "mlp.down_proj.weight", h, inter)
    # hidden after the final norm has entries ~ this scale, so a logit (a dot product with an output row) has
    # standard deviation ~ TYPICAL_LOGIT before the row's log-normal factor
    final_scale = TYPICAL_LOGIT / (output_row_std * h ** 0.5)
    w["model.norm.weight"] = random_tensor([h], next(seeds), scale=0.1 * final_scale, offset=final_scale)
    if spec["lm_head"] == "copy":
        w["lm_head.weight"] = w["model.embed_tokens.weight"]
    if spec.get("bare"):
        w = {name.removeprefix("model."): t for name, t in w.items()}
    elif spec["lm_head"] == "own":
        w["lm_head.weight"] = random_tensor([VOCAB, h], next(seeds), row_scales=row_scales)
    return w


# ---------------------------------------------------------------------------------------------------------- files

def config_json(spec):
    if spec.get("experts"):
        return moe_config_json(spec)
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "head_dim": spec["head_dim"],
        "hidden_act": "silu",
        "hidden_size": spec["hidden"],
        "initializer_range": 0.02,
        "intermediate_size": spec["intermediate"],
        "max_position_embeddings": 40960,
        "max_window_layers": spec["layers"],
        "model_type": "qwen3",
        "num_attention_heads": spec["heads"],
        "num_hidden_layers": spec["layers"],
        "num_key_value_heads": spec["kv_heads"],
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "tie_word_embeddings": spec["lm_head"] not in ("own", "none"),
        "torch_dtype": "bfloat16",
        "transformers_version": "4.51.0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": VOCAB,
    }


def moe_config_json(spec):
    """Every field of the real Qwen3-30B-A3B config.json, in its order; only the shapes differ."""
    return {
        "architectures": ["Qwen3MoeForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "decoder_sparse_step": spec["sparse_step"],
        "eos_token_id": 151645,
        "head_dim": spec["head_dim"],
        "hidden_act": "silu",
        "hidden_size": spec["hidden"],
        "initializer_range": 0.02,
        "intermediate_size": spec["intermediate"],
        "max_position_embeddings": 40960,
        "max_window_layers": spec["layers"],
        "mlp_only_layers": list(spec["mlp_only"]),
        "model_type": "qwen3_moe",
        "moe_intermediate_size": spec["moe_intermediate"],
        "norm_topk_prob": spec["norm_topk"],
        "num_attention_heads": spec["heads"],
        "num_experts": spec["experts"],
        "num_experts_per_tok": spec["top_k"],
        "num_hidden_layers": spec["layers"],
        "num_key_value_heads": spec["kv_heads"],
        "output_router_logits": False,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.001,
        "sliding_window": None,
        "tie_word_embeddings": spec["lm_head"] != "own",
        "torch_dtype": "bfloat16",
        "transformers_version": "4.51.0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": VOCAB,
    }


GENERATION_CONFIG = {
    "bos_token_id": 151643,
    "do_sample": True,
    "eos_token_id": [151645, 151643],
    "pad_token_id": 151643,
    "temperature": 0.6,
    "top_k": 20,
    "top_p": 0.95,
    "transformers_version": "4.51.0",
}


# sentence-transformers' 1_Pooling/config.json as Qwen3-Embedding-0.6B ships it (hidden size aside)
POOLING_CONFIG = {
    "word_embedding_dimension": None,
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": False,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
    "pooling_mode_weightedmean_tokens": False,
    "pooling_mode_lasttoken": True,
    "include_prompt": True,
}


def write_embedding_tokenizer(path):
    """Qwen3's tokenizer.json with Qwen3-Embedding's post_processor: ByteLevel, then <|endoftext|> after a text."""
    with open(path) as f:
        tokenizer = json.load(f)
    eos = {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}
    tokenizer["post_processor"] = {"type": "Sequence", "processors": [
        tokenizer["post_processor"],
        {"type": "TemplateProcessing",
         "single": [{"Sequence": {"id": "A", "type_id": 0}}, eos],
         "pair": [{"Sequence": {"id": "A", "type_id": 0}}, eos, {"Sequence": {"id": "B", "type_id": 1}}, eos],
         "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [151643], "tokens": ["<|endoftext|>"]}}},
    ]}
    with open(path, "w") as f:
        json.dump(tokenizer, f, ensure_ascii=False, separators=(",", ":"))


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def shard_names(weights, shards):
    """Split the sorted tensor names into `shards` consecutive runs of roughly equal bytes."""
    names = sorted(weights)
    total = sum(weights[n].nbytes for n in names)
    groups = [[] for _ in range(shards)]
    done = 0
    for name in names:
        # a tensor goes to the shard holding its midpoint, so a big tensor can start a shard of its own
        index = min(shards - 1, (2 * done + weights[name].nbytes) * shards // (2 * total))
        groups[index].append(name)
        done += weights[name].nbytes
    if any(not g for g in groups):
        raise SystemExit(f"cannot split {len(names)} tensors into {shards} non-empty shards")
    return groups


def write_checkpoint(directory, spec):
    os.makedirs(directory, exist_ok=True)
    for stale in os.listdir(directory):
        if stale.startswith("model") and stale.endswith((".safetensors", ".json")):
            os.remove(os.path.join(directory, stale))
    write_json(os.path.join(directory, "config.json"), config_json(spec))
    write_json(os.path.join(directory, "generation_config.json"), GENERATION_CONFIG)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(TOKENIZER_DIR, name), os.path.join(directory, name))
    if spec.get("embedding"):
        write_embedding_tokenizer(os.path.join(directory, "tokenizer.json"))
    if spec.get("pooling"):
        os.makedirs(os.path.join(directory, "1_Pooling"), exist_ok=True)
        write_json(os.path.join(directory, "1_Pooling", "config.json"),
                   dict(POOLING_CONFIG, word_embedding_dimension=spec["hidden"]))
    weights = make_weights(spec)
    if spec["shards"] == 1:
        total = write_safetensors(os.path.join(directory, "model.safetensors"), weights)
    else:
        weight_map, total = {}, 0
        groups = shard_names(weights, spec["shards"])
        for i, names in enumerate(groups):
            file = f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
            total += write_safetensors(os.path.join(directory, file), {n: weights[n] for n in names})
            weight_map.update({n: file for n in names})
        write_json(os.path.join(directory, "model.safetensors.index.json"),
                   {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    params = sum(t.nbytes for t in weights.values()) // 2
    print(f"{directory}: {params} parameters, {total} bytes of bf16 tensors, {spec['shards']} file(s)")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--preset", choices=sorted(PRESETS), help="one committed test checkpoint")
    group.add_argument("--all", action="store_true", help="all presets, into DIR/<preset>")
    group.add_argument("--full", action="store_true", help="Qwen3-0.6B shapes, tied, no lm_head.weight")
    parser.add_argument("--seed", type=int, help="override the preset's seed")
    parser.add_argument("dir")
    args = parser.parse_args(argv)
    if args.all:
        for name, spec in PRESETS.items():
            write_checkpoint(os.path.join(args.dir, name), spec)
        return 0
    spec = dict(FULL if args.full else PRESETS[args.preset])
    if args.seed is not None:
        spec["seed"] = args.seed
    write_checkpoint(args.dir, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
