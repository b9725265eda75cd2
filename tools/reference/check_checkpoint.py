#!/usr/bin/python3
"""Reads checkpoint directories back without the writer's code and checks they are what a Qwen3 (or Qwen3-MoE) loader
expects:
safetensors framing (u64 LE header length, header a multiple of 8 bytes padded with spaces, offsets contiguous and
covering the file), every tensor name and shape config.json implies, the shard index, and, where there is a golden,
that last_logits.f32 agrees with golden.json.

    python3 tools/reference/check_checkpoint.py models/tiny-tied models/tiny-untied models/tiny-tied-head-sharded
"""
import json
import os
import struct
import sys

import numpy as np


def read_header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        text = f.read(length).decode("utf-8")
    assert length % 8 == 0, f"{path}: header length {length} not a multiple of 8"
    assert text == text.rstrip(" ") + " " * (len(text) - len(text.rstrip(" "))), f"{path}: padding"
    header = json.loads(text)
    header.pop("__metadata__", None)
    end = 0
    for name in sorted(header, key=lambda n: header[n]["data_offsets"][0]):
        begin, stop = header[name]["data_offsets"]
        assert begin == end, f"{path}: gap before {name}"
        assert header[name]["dtype"] == "BF16", f"{path}: {name} is {header[name]['dtype']}"
        assert stop - begin == 2 * int(np.prod(header[name]["shape"])), f"{path}: {name} size"
        end = stop
    assert 8 + length + end == os.path.getsize(path), f"{path}: data does not end at end of file"
    return header


def expected_shapes(c):
    h, hd, inter = c["hidden_size"], c["head_dim"], c["intermediate_size"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    shapes = {"model.embed_tokens.weight": [c["vocab_size"], h], "model.norm.weight": [h]}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({
            p + "input_layernorm.weight": [h], p + "post_attention_layernorm.weight": [h],
            p + "self_attn.q_proj.weight": [q, h], p + "self_attn.k_proj.weight": [kv, h],
            p + "self_attn.v_proj.weight": [kv, h], p + "self_attn.o_proj.weight": [h, q],
            p + "self_attn.q_norm.weight": [hd], p + "self_attn.k_norm.weight": [hd]})
        experts = c.get("num_experts") or 0
        sparse = (experts > 0 and i not in (c.get("mlp_only_layers") or [])
                  and (i + 1) % (c.get("decoder_sparse_step") or 1) == 0)
        if sparse:  # Qwen3-MoE: router plus per-expert SwiGLU of moe_intermediate_size
            width = c["moe_intermediate_size"]
            shapes[p + "mlp.gate.weight"] = [experts, h]
            for e in range(experts):
                x = f"{p}mlp.experts.{e}."
                shapes.update({x + "gate_proj.weight": [width, h], x + "up_proj.weight": [width, h],
                               x + "down_proj.weight": [h, width]})
        else:
            shapes.update({p + "mlp.gate_proj.weight": [inter, h], p + "mlp.up_proj.weight": [inter, h],
                           p + "mlp.down_proj.weight": [h, inter]})
    return shapes


def check(directory):
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    index_path = os.path.join(directory, "model.safetensors.index.json")
    shapes, owner = {}, {}
    files = sorted(n for n in os.listdir(directory) if n.endswith(".safetensors"))
    for file in files:
        for name, info in read_header(os.path.join(directory, file)).items():
            assert name not in shapes, f"{name} in two files"
            shapes[name], owner[name] = info["shape"], file
    expected = expected_shapes(config)
    if not config["tie_word_embeddings"] or "lm_head.weight" in shapes:
        expected["lm_head.weight"] = [config["vocab_size"], config["hidden_size"]]
    assert shapes == expected, f"{directory}: tensors differ from config: {set(shapes) ^ set(expected)}"
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
        assert index["weight_map"] == owner, f"{index_path}: weight_map disagrees with the files"
        total = sum(2 * int(np.prod(s)) for s in shapes.values())
        assert index["metadata"]["total_size"] == total, f"{index_path}: total_size"
    golden_path = os.path.join(directory, "golden", "golden.json")
    if os.path.exists(golden_path):
        with open(golden_path) as f:
            golden = json.load(f)
        last = np.fromfile(os.path.join(directory, "golden", "last_logits.f32"), dtype="<f4")
        assert last.shape == (config["vocab_size"],)
        final = golden["positions"][-1]
        assert np.argsort(-last, kind="stable")[:5].tolist() == final["top_ids"], "last_logits top-5 ids"
        assert np.allclose(last[final["top_ids"]], final["top_logits"], rtol=1e-6), "last_logits values"
        assert len(golden["positions"]) == len(golden["prompt_ids"]) == len(golden["probe_logits"])
    print(f"{directory}: ok ({len(shapes)} tensors in {len(files)} file(s), tied={config['tie_word_embeddings']}, "
          f"lm_head.weight {'present' if 'lm_head.weight' in shapes else 'absent'})")


if __name__ == "__main__":
    for d in sys.argv[1:]:
        check(d)
