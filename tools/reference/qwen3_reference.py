#!/usr/bin/python3
"""Float64 reference forward pass of a Qwen3 causal LM (the math of Hugging Face's modeling_qwen3), and of a Qwen3-MoE
one (modeling_qwen3_moe: the same attention, a routed mixture of SwiGLU experts in place of the MLP), written
independently so the Java engine can be judged against it.

It reads a checkpoint directory (config.json plus model.safetensors, or shards listed in
model.safetensors.index.json) with its own small safetensors parser, widens bf16/f16/f32 weights to float64 exactly,
and computes logits either for a whole sequence at once or one token at a time through a KV cache.

    python3 tools/reference/qwen3_reference.py --self-test
    python3 tools/reference/qwen3_reference.py models/tiny-tied 9707 1879   # prints the top-5 next ids
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


# ---------------------------------------------------------------------------------------------------------- loading

def _widen(raw, dtype):
    """Little-endian tensor bytes -> float64 array, exactly (every bf16/f16/f32 value is a float64 value)."""
    if dtype == "BF16":
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    if dtype == "F16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float64)
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    raise ValueError(f"unsupported dtype {dtype}")


def read_safetensors(path):
    """name -> float64 torch tensor, parsed from the file format directly (u64 LE header length, JSON, data)."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len])
    data = memoryview(blob)[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        values = _widen(data[begin:end], info["dtype"])
        tensors[name] = torch.from_numpy(values.reshape(info["shape"]).copy())
    return tensors


def load_checkpoint(directory):
    """(config dict, weights dict) for a Hugging Face Qwen3 checkpoint directory, single file or sharded."""
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    index_path = os.path.join(directory, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for name in files:
        weights.update(read_safetensors(os.path.join(directory, name)))
    if "embed_tokens.weight" in weights:  # a bare Qwen3Model (Qwen3-Embedding): the same modules without "model."
        weights = {("model." + name if name != "lm_head.weight" else name): t for name, t in weights.items()}
    return config, weights


# ---------------------------------------------------------------------------------------------------------- model

def rms_norm(x, weight, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_parameters(config, head_dim):
    """(inv_freq [head_dim/2], attention factor) as Hugging Face's rope init functions compute them, in float64.

    rope_scaling (or transformers 5's rope_parameters) null, empty or of type "default": plain RoPE,
    inv_freq[i] = theta^(-2i/head_dim), factor 1. Type "yarn" (the legacy key "type" too): transformers'
    _compute_yarn_parameters as of 2025-08 onwards, which uses the explicit factor even where
    max_position_embeddings / original_max_position_embeddings says otherwise. Other types are not implemented.
    """
    params = config.get("rope_scaling") or config.get("rope_parameters") or {}
    rope_type = params.get("rope_type", params.get("type", "default"))
    base = params.get("rope_theta", config.get("rope_theta"))
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim
    if rope_type == "default":
        return base ** -exponents, 1.0
    if rope_type != "yarn":
        raise ValueError(f"rope type {rope_type!r} is not implemented")

    # A top-level original_max_position_embeddings wins over rope_scaling's; both default to max_position_embeddings.
    original = config.get("original_max_position_embeddings",
                          params.get("original_max_position_embeddings", config["max_position_embeddings"]))
    factor = params["factor"]
    if factor is None:
        factor = config["max_position_embeddings"] / original

    def magnitude(scale, mscale=1.0):
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    attention = params.get("attention_factor")
    if attention is None:
        mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            attention = magnitude(factor, mscale) / magnitude(factor, mscale_all_dim)
        else:
            attention = magnitude(factor)
    beta_fast = params.get("beta_fast") or 32  # `or`, as transformers: 0 and null both mean the default
    beta_slow = params.get("beta_slow") or 1

    def correction_dim(rotations):
        """The pair index whose dims turn `rotations` times over the original context."""
        return head_dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if params.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(head_dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    kept = 1 - ramp  # share of the original (extrapolated) frequency; the rest is divided by factor
    turns = base ** exponents
    inv_freq = 1 / (factor * turns) * (1 - kept) + 1 / turns * kept
    return inv_freq, float(attention)


def is_moe_layer(config, layer):
    """Hugging Face's Qwen3MoeDecoderLayer rule: sparse unless listed in mlp_only_layers, with experts, every
    decoder_sparse_step-th layer (counting from 1). A dense Qwen3 config has no num_experts: every layer dense."""
    experts = config.get("num_experts") or 0
    step = config.get("decoder_sparse_step") or 1
    return layer not in (config.get("mlp_only_layers") or []) and experts > 0 and (layer + 1) % step == 0


def route(router_logits, top_k, normalize):
    """(chosen expert ids [n, top_k] ascending, their weights [n, top_k]) as Qwen3MoeSparseMoeBlock computes them:
    softmax over all experts, the top_k largest probabilities, divided by their sum when normalize (norm_topk_prob).

    Ties: an exactly equal probability goes to the lower expert index (a stable descending sort). torch.topk on CPU
    (1.13) does not promise that (it returned [6, 5, 4] for eight equal values), so Hugging Face's choice on an exact
    tie is unspecified; the goldens keep every k-th/(k+1)-th gap far from a tie instead of relying on this rule."""
    p = torch.softmax(router_logits, dim=-1)
    order = torch.sort(p, dim=-1, descending=True, stable=True).indices[:, :top_k]
    chosen = order.sort(dim=-1).values
    weights = p.gather(-1, chosen)
    if normalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return chosen, weights


def router_gap(router_logits, top_k):
    """Per row: log(p_k / p_(k+1)) = logit_k - logit_(k+1), the k-th largest router logit minus the next one (how far
    the expert choice is from a tie; the relative probability gap is 1 - exp(-gap))."""
    top = torch.sort(router_logits, dim=-1, descending=True).values
    return top[:, top_k - 1] - top[:, top_k]


class Qwen3Reference:
    def __init__(self, config, weights):
        self.c = config
        self.w = weights
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.kv_heads = config["num_key_value_heads"]
        self.head_dim = config.get("head_dim") or config["hidden_size"] // self.heads
        self.eps = config["rms_norm_eps"]
        if not config["tie_word_embeddings"]:
            self.lm_head = weights.get("lm_head.weight")  # None: a bare Qwen3Model, hidden states only
        else:  # tied: the output projection is the embedding, whether or not the file also carries a copy
            self.lm_head = weights["model.embed_tokens.weight"]
        self.inv_freq, self.attention_factor = rope_parameters(config, self.head_dim)
        self.moe_layers = [layer for layer in range(self.layers) if is_moe_layer(config, layer)]
        self.top_k = config.get("num_experts_per_tok")
        self.normalize_top_k = config.get("norm_topk_prob", False)  # Qwen3MoeConfig's default
        self.router_log = None  # a list to record (layer, router logits [n, experts]) of every MoE call into
        # (weight name, x) -> x: what every matmul's input becomes first (activation_rounding.py); None: itself
        self.round_input = None

    def linear(self, x, name):
        """x @ W^T for the weight `name` ("lm_head.weight": the output projection, tied or not)."""
        if self.round_input is not None:
            x = self.round_input(name, x)
        return x @ (self.lm_head if name == "lm_head.weight" else self.w[name]).T

    def feed_forward(self, layer, h):
        """The MLP of layer `layer` on h = post-attention-normed x: dense SwiGLU, or the routed experts."""
        p = f"model.layers.{layer}.mlp."
        if layer not in self.moe_layers:
            gate = self.linear(h, p + "gate_proj.weight")
            up = self.linear(h, p + "up_proj.weight")
            return self.linear(torch.nn.functional.silu(gate) * up, p + "down_proj.weight")
        router_logits = self.linear(h, p + "gate.weight")
        if self.router_log is not None:
            self.router_log.append((layer, router_logits))
        chosen, weights = route(router_logits, self.top_k, self.normalize_top_k)
        out = torch.zeros_like(h)
        for row in range(h.shape[0]):
            for expert, weight in zip(chosen[row].tolist(), weights[row]):  # ascending expert index
                e = f"{p}experts.{expert}."
                gate = self.linear(h[row], e + "gate_proj.weight")
                up = self.linear(h[row], e + "up_proj.weight")
                out[row] += weight * self.linear(torch.nn.functional.silu(gate) * up, e + "down_proj.weight")
        return out

    def rope(self, x, positions):
        """x: [heads, seq, head_dim]; dims i and i + head_dim/2 rotate together by angle pos * inv_freq[i], and cos
        and sin are multiplied by the attention factor (1 for plain RoPE), as Hugging Face's rotary embedding does."""
        angles = positions[:, None].to(torch.float64) * self.inv_freq[None, :]
        angles = torch.cat((angles, angles), dim=-1)
        cos = torch.cos(angles) * self.attention_factor
        sin = torch.sin(angles) * self.attention_factor
        return x * cos + rotate_half(x) * sin

    def new_cache(self):
        """Per layer: keys and values of all positions seen so far, [kv_heads, seq, head_dim], after norm and RoPE."""
        empty = torch.zeros(self.kv_heads, 0, self.head_dim)
        return [[empty, empty] for _ in range(self.layers)]

    def forward(self, ids, cache):
        """Logits [len(ids), vocab] for ids placed after the cache's positions; appends their keys/values to cache."""
        return self.linear(self.hidden(ids, cache), "lm_head.weight")

    def hidden(self, ids, cache):
        """The final-normed hidden states [len(ids), hidden] (what forward projects to logits)."""
        start = cache[0][0].shape[1]
        n = len(ids)
        positions = torch.arange(start, start + n)
        x = self.w["model.embed_tokens.weight"][torch.tensor(ids)]
        group = self.heads // self.kv_heads
        # query at absolute position start+i sees keys 0 .. start+i
        visible = torch.arange(start + n)[None, :] <= positions[:, None]
        for layer in range(self.layers):
            p = f"model.layers.{layer}."
            h = rms_norm(x, self.w[p + "input_layernorm.weight"], self.eps)
            q = self.linear(h, p + "self_attn.q_proj.weight").view(n, self.heads, self.head_dim).transpose(0, 1)
            k = self.linear(h, p + "self_attn.k_proj.weight").view(n, self.kv_heads, self.head_dim).transpose(0, 1)
            v = self.linear(h, p + "self_attn.v_proj.weight").view(n, self.kv_heads, self.head_dim).transpose(0, 1)
            q = self.rope(rms_norm(q, self.w[p + "self_attn.q_norm.weight"], self.eps), positions)
            k = self.rope(rms_norm(k, self.w[p + "self_attn.k_norm.weight"], self.eps), positions)
            cache[layer][0] = torch.cat((cache[layer][0], k), dim=1)
            cache[layer][1] = torch.cat((cache[layer][1], v), dim=1)
            keys = cache[layer][0].repeat_interleave(group, dim=0)  # query head h reads kv head h // group
            values = cache[layer][1].repeat_interleave(group, dim=0)
            scores = q @ keys.transpose(1, 2) / math.sqrt(self.head_dim)
            scores = scores.masked_fill(~visible, float("-inf"))
            attended = torch.softmax(scores, dim=-1) @ values  # [heads, n, head_dim]
            attended = attended.transpose(0, 1).reshape(n, self.heads * self.head_dim)
            x = x + self.linear(attended, p + "self_attn.o_proj.weight")
            h = rms_norm(x, self.w[p + "post_attention_layernorm.weight"], self.eps)
            x = x + self.feed_forward(layer, h)
        return rms_norm(x, self.w["model.norm.weight"], self.eps)

    def logits(self, ids):
        """Logits for every position of ids, computed as one sequence."""
        return self.forward(ids, self.new_cache())

    def logits_incremental(self, ids):
        """Logits for every position of ids, fed one token at a time through the KV cache."""
        cache = self.new_cache()
        return torch.cat([self.forward([token], cache) for token in ids], dim=0)

    def greedy(self, prompt_ids, steps):
        """Greedy continuation: prefill the prompt, then decode one token at a time through the KV cache."""
        cache = self.new_cache()
        last = self.forward(prompt_ids, cache)[-1]
        generated = []
        for _ in range(steps):
            token = int(torch.argmax(last))
            generated.append(token)
            last = self.forward([token], cache)[-1]
        return generated


# ---------------------------------------------------------------------------------------------------------- self-test

def self_test():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ids = [151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198, 785, 3974, 13876, 38835, 34208, 916, 279, 15678]
    ok = True
    for name in ("tiny-tied", "tiny-untied", "tiny-tied-head-sharded", "tiny-tied-yarn", "tiny-moe"):
        model = Qwen3Reference(*load_checkpoint(os.path.join(repo, "models", name)))
        full = model.logits(ids)
        step = model.logits_incremental(ids)
        chunked_cache = model.new_cache()  # prefill in uneven chunks, as an engine would
        chunked = torch.cat([model.forward(ids[a:b], chunked_cache) for a, b in ((0, 5), (5, 6), (6, 17))])
        diff = max(float((full - step).abs().max()), float((full - chunked).abs().max()))
        scale = float(full.abs().max())
        passed = diff <= 1e-9 * scale
        ok &= passed
        print(f"{name}: max |full - incremental| = {diff:.3e} (max |logit| {scale:.1f}) {'ok' if passed else 'FAIL'}")
    # RoPE property, YaRN's too: rotating by position p then taking dot products depends only on the position
    # difference (YaRN's attention factor scales every dot product alike).
    for name in ("tiny-tied", "tiny-tied-yarn"):
        model = Qwen3Reference(*load_checkpoint(os.path.join(repo, "models", name)))
        g = torch.Generator().manual_seed(0)
        a, b = torch.randn(1, 1, model.head_dim, generator=g), torch.randn(1, 1, model.head_dim, generator=g)
        d1 = (model.rope(a, torch.tensor([7])) * model.rope(b, torch.tensor([3]))).sum()
        d2 = (model.rope(a, torch.tensor([1007])) * model.rope(b, torch.tensor([1003]))).sum()
        rope_ok = abs(float(d1 - d2)) < 1e-9
        ok &= rope_ok
        print(f"{name}: rope relative-position invariance: {abs(float(d1 - d2)):.3e} {'ok' if rope_ok else 'FAIL'}")
    # YaRN of factor 1 is plain RoPE: interpolated and extrapolated frequencies coincide, the attention factor is 1.
    config = {"rope_theta": 1e6, "max_position_embeddings": 40960}
    plain, _ = rope_parameters(config, 128)
    unit, attention = rope_parameters(dict(config, rope_scaling={"rope_type": "yarn", "factor": 1.0}), 128)
    unit_ok = float((unit / plain - 1).abs().max()) < 1e-15 and attention == 1.0
    ok &= unit_ok
    print(f"yarn of factor 1 is plain rope: {'ok' if unit_ok else 'FAIL'}")
    ok &= moe_self_test(repo)
    print("self-test", "passed" if ok else "FAILED")
    return 0 if ok else 1


def moe_self_test(repo):
    """The routed feed-forward against a second, vectorized formulation, and the tie rule."""
    ok = True
    config, weights = load_checkpoint(os.path.join(repo, "models", "tiny-moe"))
    model = Qwen3Reference(config, weights)
    layers_ok = model.moe_layers == [0, 2]  # mlp_only_layers [1]
    ok &= layers_ok
    print(f"tiny-moe: MoE layers {model.moe_layers} {'ok' if layers_ok else 'FAIL'}")
    g = torch.Generator().manual_seed(1)
    h = torch.randn(7, config["hidden_size"], generator=g)
    experts = config["num_experts"]

    def all_experts(layer):  # [experts, n, hidden]: every expert's SwiGLU output for every row
        e = [f"model.layers.{layer}.mlp.experts.{i}." for i in range(experts)]
        gate = torch.stack([h @ weights[x + "gate_proj.weight"].T for x in e])
        up = torch.stack([h @ weights[x + "up_proj.weight"].T for x in e])
        down = torch.stack([weights[x + "down_proj.weight"] for x in e])
        return torch.einsum("enf,ehf->enh", torch.nn.functional.silu(gate) * up, down)

    outputs = all_experts(0)
    p = torch.softmax(h @ weights["model.layers.0.mlp.gate.weight"].T, dim=-1)  # [n, experts]
    kth = p.sort(dim=-1, descending=True).values[:, config["num_experts_per_tok"] - 1:config["num_experts_per_tok"]]
    mask = (p >= kth).to(torch.float64)  # no ties in random data: exactly top_k ones per row
    w = p * mask / (p * mask).sum(dim=-1, keepdim=True)
    expected = torch.einsum("ne,enh->nh", w, outputs)
    diff = float((model.feed_forward(0, h) - expected).abs().max())
    moe_ok = diff <= 1e-12 * float(expected.abs().max()) and int(mask.sum()) == 7 * config["num_experts_per_tok"]
    ok &= moe_ok
    print(f"tiny-moe: routed experts vs dense-weighted formulation {diff:.3e} {'ok' if moe_ok else 'FAIL'}")
    # all experts chosen and normalized: the plain softmax mixture
    model.top_k = experts
    diff = float((model.feed_forward(0, h) - torch.einsum("ne,enh->nh", p, outputs)).abs().max())
    model.top_k = config["num_experts_per_tok"]
    mix_ok = diff <= 1e-12 * float(outputs.abs().max())
    ok &= mix_ok
    print(f"tiny-moe: top_k = num_experts is the softmax mixture {diff:.3e} {'ok' if mix_ok else 'FAIL'}")
    chosen, w = route(torch.tensor([[0.0] * 8, [1.0, 3, 3, 2, 3, 0, 3, 0]]), 3, True)
    tie_ok = chosen.tolist() == [[0, 1, 2], [1, 2, 4]] and float((w - 1 / 3).abs().max()) < 1e-15
    ok &= tie_ok
    print(f"routing ties go to the lower expert index: {'ok' if tie_ok else 'FAIL'}")
    return ok


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__)
        return 2
    model = Qwen3Reference(*load_checkpoint(argv[0]))
    last = model.logits([int(t) for t in argv[1:]])[-1]
    top = torch.topk(last, 5)
    for token, logit in zip(top.indices.tolist(), top.values.tolist()):
        print(token, repr(logit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
