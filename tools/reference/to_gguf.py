#!/usr/bin/python3
"""Converts a Hugging Face Qwen3 checkpoint directory to a bf16 GGUF file that llama.cpp loads as architecture qwen3
(a Qwen3MoeForCausalLM one, model_type qwen3_moe, as qwen3moe), so llama.cpp can be benchmarked on exactly the
weights fs runs.

    /usr/bin/python3 tools/reference/to_gguf.py models/full /tmp/full-bf16.gguf
    /usr/bin/python3 tools/reference/to_gguf.py --rerank models/tiny-rerank-heldout /tmp/rerank.gguf

Reads config.json, tokenizer.json, tokenizer_config.json (its chat_template becomes tokenizer.chat_template),
generation_config.json (optional) and model.safetensors or model.safetensors.index.json with its shards. Matrices keep their bf16 bytes (a Hugging Face [out, in] row-major
matrix is byte for byte a ggml tensor with dims [in, out]); 1-D norm weights become F32, as llama.cpp's own converter
writes them. A tied checkpoint gets no output.weight: llama.cpp then reuses token_embd.weight.

Qwen3-MoE, as llama.cpp's convert_hf_to_gguf.py (Qwen3MoeModel) writes it: qwen3moe.expert_count (num_experts),
expert_used_count (num_experts_per_tok), expert_feed_forward_length (moe_intermediate_size), feed_forward_length
(intermediate_size); per layer the router blk.N.ffn_gate_inp.weight (F32, ggml dims [hidden, experts]) and the experts
stacked expert-major into 3-D tensors blk.N.ffn_{gate,up,down}_exps.weight (bf16, ggml dims [in, out, experts], i.e.
the Hugging Face [out, in] matrices of experts 0, 1, ... one after another). llama.cpp's qwen3moe has no dense layers
and always renormalizes the chosen experts' weights, so a checkpoint with mlp_only_layers, decoder_sparse_step > 1 or
norm_topk_prob false is refused.

--rerank writes a Qwen3-Reranker (a Qwen3ForCausalLM checkpoint) as llama.cpp's convert_hf_to_gguf.py does when it
recognises one (Qwen3Model with is_rerank): qwen3.pooling_type 4 (rank), qwen3.classifier.output_labels ["yes", "no"],
the rerank template as tokenizer.chat_template.rerank (named in tokenizer.chat_templates), and of the output projection
only the rows of the tokens "yes" and "no", in that order, as cls.output.weight (bf16, ggml dims [hidden, 2]). The
embedding stays token_embd.weight; an untied checkpoint's lm_head.weight is not written as output.weight. llama.cpp
scores softmax(cls.output.weight @ h)[0], h the final-normed hidden state of the last token: P(yes).

GGUF v3 layout: "GGUF", u32 version, u64 tensor count, u64 metadata count, the metadata key/values, the tensor infos
(name, u32 n_dims, u64 dims fastest-varying first, u32 ggml type, u64 offset into the data section), zero padding to
the alignment, then the tensor data, each tensor starting at a multiple of the alignment. All little-endian.
"""
import json
import os
import struct
import sys

import numpy as np

ALIGNMENT = 32

# ggml tensor types
GGML_F32 = 0
GGML_BF16 = 30
# llama_ftype: every matrix bf16
FTYPE_MOSTLY_BF16 = 32

# GGUF metadata value types
GGUF_U32 = 4
GGUF_I32 = 5
GGUF_F32 = 6
GGUF_BOOL = 7
GGUF_STRING = 8
GGUF_ARRAY = 9

# llama.cpp token types
TOKEN_NORMAL = 1
TOKEN_CONTROL = 3
TOKEN_USER_DEFINED = 4
TOKEN_UNUSED = 5

# Hugging Face name -> GGUF name, per layer
LAYER_TENSORS = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


# llama.cpp's LLAMA_POOLING_TYPE_RANK, and a reranker's classifier rows in the order convert_hf_to_gguf.py stacks them
POOLING_RANK = 4
RERANK_LABELS = ["yes", "no"]
RERANK_TEMPLATE = (
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
    "provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
    "<|im_start|>user\n<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n"
    "<Query>: {query}\n<Document>: {document}<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n\n")


class Rows:
    """Rows `ids` of Hugging Face tensor `name`, stacked in that order (a reranker's classifier head)."""

    def __init__(self, name, ids):
        self.name = name
        self.ids = ids


# Hugging Face name -> GGUF name, per MoE layer (the router; the experts are stacked, see tensor_plan)
MOE_ROUTER = ("mlp.gate.weight", "ffn_gate_inp.weight")
MOE_EXPERTS = (("gate_proj", "ffn_gate_exps.weight"), ("up_proj", "ffn_up_exps.weight"),
               ("down_proj", "ffn_down_exps.weight"))


def fail(message):
    print(f"to_gguf: {message}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------------------- reading

class SafetensorsFile:
    """The tensors of one .safetensors file, as bf16 uint16 arrays over a read-only memory map."""

    def __init__(self, path):
        with open(path, "rb") as f:
            (header_len,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(header_len))
        header.pop("__metadata__", None)
        self.path = path
        self.data_start = 8 + header_len
        self.entries = header
        self.map = np.memmap(path, dtype=np.uint8, mode="r")

    def array(self, name):
        entry = self.entries[name]
        if entry["dtype"] != "BF16":
            fail(f"{self.path}: tensor {name} is {entry['dtype']}, only BF16 checkpoints are supported")
        begin, end = entry["data_offsets"]
        raw = self.map[self.data_start + begin:self.data_start + end]
        return raw.view(np.uint16).reshape(entry["shape"])


def open_checkpoint(directory):
    """name -> (SafetensorsFile, name) for every tensor of the checkpoint, single-file or sharded."""
    single = os.path.join(directory, "model.safetensors")
    index = os.path.join(directory, "model.safetensors.index.json")
    if os.path.exists(single):
        files = [SafetensorsFile(single)]
    elif os.path.exists(index):
        with open(index) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        files = [SafetensorsFile(os.path.join(directory, s)) for s in shards]
    else:
        fail(f"{directory}: neither model.safetensors nor model.safetensors.index.json")
    return {name: f for f in files for name in f.entries}


def load_json(directory, name, required=True):
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        if required:
            fail(f"{path}: missing")
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------------------- tokenizer

def vocabulary(directory, vocab_size):
    """(tokens, token types, merges) as llama.cpp's gpt2 tokenizer wants them: one entry per id up to vocab_size, the
    ids the tokenizer does not use filled with "[PAD{id}]" placeholders of type UNUSED."""
    tokenizer = load_json(directory, "tokenizer.json")
    model = tokenizer["model"]
    if model.get("type") != "BPE":
        fail(f"{directory}/tokenizer.json: model type {model.get('type')}, expected BPE")
    by_id = {i: (text, TOKEN_NORMAL) for text, i in model["vocab"].items()}
    for added in tokenizer.get("added_tokens", []):
        # As llama.cpp's converter typed q-tied's tokens: Hugging Face's special flag alone decides (<|fim_prefix|>,
        # not special, stays USER_DEFINED), so that skipping special tokens drops the same ones in both tokenizers.
        kind = TOKEN_CONTROL if added.get("special") else TOKEN_USER_DEFINED
        by_id[added["id"]] = (added["content"], kind)
    if max(by_id) >= vocab_size:
        fail(f"{directory}: token id {max(by_id)} does not fit vocab_size {vocab_size}")
    tokens, types = [], []
    for i in range(vocab_size):
        text, kind = by_id.get(i, (f"[PAD{i}]", TOKEN_UNUSED))
        tokens.append(text)
        types.append(kind)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return tokens, types, merges


def token_id(directory, tokenizer_config, field):
    """The id of a special token named in tokenizer_config.json (e.g. "eos_token"), or None."""
    token = tokenizer_config.get(field)
    if isinstance(token, dict):
        token = token.get("content")
    if token is None:
        return None
    added = load_json(directory, "tokenizer.json")["added_tokens"]
    for entry in added:
        if entry["content"] == token:
            return entry["id"]
    fail(f"{directory}/tokenizer_config.json: {field} {token!r} is not an added token of tokenizer.json")


# ---------------------------------------------------------------------------------------------------------- writing

def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def gguf_value(kind, value):
    if kind == GGUF_U32:
        return struct.pack("<I", value)
    if kind == GGUF_I32:
        return struct.pack("<i", value)
    if kind == GGUF_F32:
        return struct.pack("<f", value)
    if kind == GGUF_BOOL:
        return struct.pack("<B", 1 if value else 0)
    if kind == GGUF_STRING:
        return gguf_string(value)
    raise ValueError(kind)


def gguf_kv(key, kind, value, item_kind=None):
    """One metadata entry; an array when kind is GGUF_ARRAY (items all of item_kind)."""
    out = gguf_string(key) + struct.pack("<I", kind)
    if kind != GGUF_ARRAY:
        return out + gguf_value(kind, value)
    out += struct.pack("<IQ", item_kind, len(value))
    if item_kind == GGUF_I32:
        return out + np.asarray(value, dtype="<i4").tobytes()
    return out + b"".join(gguf_value(item_kind, v) for v in value)


def rerank_ids(directory):
    """The ids of the tokens "yes" and "no", as the converter finds them (convert_tokens_to_ids)."""
    vocab = load_json(directory, "tokenizer.json")["model"]["vocab"]
    missing = [label for label in RERANK_LABELS if label not in vocab]
    if missing:
        fail(f"{directory}/tokenizer.json: no token {missing[0]!r} for a reranker's classifier head")
    return [vocab[label] for label in RERANK_LABELS]


def metadata(directory, config, rerank):
    # Only plain RoPE is written: a YaRN checkpoint converted without its scaling would run wrong in llama.cpp.
    scaling = config.get("rope_scaling") or config.get("rope_parameters") or {}
    if scaling.get("rope_type", scaling.get("type", "default")) != "default":
        fail(f"{os.path.join(directory, 'config.json')}: rope_scaling {json.dumps(scaling)} is not converted "
             "(this tool writes plain RoPE only)")
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    vocab_size = config["vocab_size"]
    tokens, types, merges = vocabulary(directory, vocab_size)
    tokenizer_config = load_json(directory, "tokenizer_config.json")
    generation = load_json(directory, "generation_config.json", required=False)

    moe = is_moe(config)
    a = "qwen3moe" if moe else "qwen3"
    kvs = [
        gguf_kv("general.architecture", GGUF_STRING, a),
        gguf_kv("general.name", GGUF_STRING, os.path.basename(os.path.normpath(directory))),
        gguf_kv("general.file_type", GGUF_U32, FTYPE_MOSTLY_BF16),
        gguf_kv("general.alignment", GGUF_U32, ALIGNMENT),
        gguf_kv(f"{a}.block_count", GGUF_U32, config["num_hidden_layers"]),
        gguf_kv(f"{a}.context_length", GGUF_U32, config["max_position_embeddings"]),
        gguf_kv(f"{a}.embedding_length", GGUF_U32, hidden),
        gguf_kv(f"{a}.feed_forward_length", GGUF_U32, config["intermediate_size"]),
        gguf_kv(f"{a}.attention.head_count", GGUF_U32, heads),
        gguf_kv(f"{a}.attention.head_count_kv", GGUF_U32, config.get("num_key_value_heads", heads)),
        gguf_kv(f"{a}.attention.key_length", GGUF_U32, head_dim),
        gguf_kv(f"{a}.attention.value_length", GGUF_U32, head_dim),
        gguf_kv(f"{a}.attention.layer_norm_rms_epsilon", GGUF_F32, config["rms_norm_eps"]),
        gguf_kv(f"{a}.rope.freq_base", GGUF_F32, float(config.get("rope_theta", 10000.0))),
        gguf_kv(f"{a}.rope.dimension_count", GGUF_U32, head_dim),
    ]
    if moe:
        kvs += [
            gguf_kv(f"{a}.expert_count", GGUF_U32, config["num_experts"]),
            gguf_kv(f"{a}.expert_used_count", GGUF_U32, config["num_experts_per_tok"]),
            gguf_kv(f"{a}.expert_feed_forward_length", GGUF_U32, config["moe_intermediate_size"]),
        ]
    kvs += [
        gguf_kv("tokenizer.ggml.model", GGUF_STRING, "gpt2"),
        gguf_kv("tokenizer.ggml.pre", GGUF_STRING, "qwen2"),
        gguf_kv("tokenizer.ggml.tokens", GGUF_ARRAY, tokens, GGUF_STRING),
        gguf_kv("tokenizer.ggml.token_type", GGUF_ARRAY, types, GGUF_I32),
        gguf_kv("tokenizer.ggml.merges", GGUF_ARRAY, merges, GGUF_STRING),
        gguf_kv("tokenizer.ggml.add_bos_token", GGUF_BOOL, bool(tokenizer_config.get("add_bos_token", False))),
    ]
    if "chat_template" in tokenizer_config:
        kvs.append(gguf_kv("tokenizer.chat_template", GGUF_STRING, tokenizer_config["chat_template"]))
    if rerank:
        kvs += [
            gguf_kv(f"{a}.pooling_type", GGUF_U32, POOLING_RANK),
            gguf_kv(f"{a}.classifier.output_labels", GGUF_ARRAY, RERANK_LABELS, GGUF_STRING),
            gguf_kv("tokenizer.chat_template.rerank", GGUF_STRING, RERANK_TEMPLATE),
            gguf_kv("tokenizer.chat_templates", GGUF_ARRAY, ["rerank"], GGUF_STRING),
        ]
    # Qwen3 names no bos token in tokenizer_config.json; config.json's bos_token_id (<|endoftext|>) is what llama.cpp's
    # converter records, as it does for padding.
    bos = token_id(directory, tokenizer_config, "bos_token")
    bos = bos if bos is not None else config.get("bos_token_id")
    eos = token_id(directory, tokenizer_config, "eos_token")
    eos = eos if eos is not None else config.get("eos_token_id")
    pad = token_id(directory, tokenizer_config, "pad_token")
    pad = pad if pad is not None else generation.get("pad_token_id")
    for field, value in (("bos", bos), ("eos", eos), ("padding", pad)):
        if value is not None:
            kvs.append(gguf_kv(f"tokenizer.ggml.{field}_token_id", GGUF_U32, value))
    return kvs


def is_moe(config):
    """True for a Qwen3-MoE checkpoint; fails on one llama.cpp's qwen3moe cannot represent."""
    if config.get("model_type") != "qwen3_moe":
        return False
    experts = config.get("num_experts") or 0
    step = config.get("decoder_sparse_step") or 1
    dense = [i for i in range(config["num_hidden_layers"])
             if i in (config.get("mlp_only_layers") or []) or experts <= 0 or (i + 1) % step != 0]
    if dense:
        fail(f"config.json: layers {dense} have a dense MLP (mlp_only_layers / decoder_sparse_step / num_experts); "
             "llama.cpp's qwen3moe has only MoE layers")
    if not config.get("norm_topk_prob", False):
        fail("config.json: norm_topk_prob false; llama.cpp's qwen3moe always renormalizes the chosen experts' weights")
    return True


def tensor_plan(tensors, config, rerank_rows=None):
    """[(gguf name, hf name or tuple of hf names stacked along a new leading dim or Rows of one, ggml type)] in
    llama.cpp's usual order; fails on missing or unexpected tensors. rerank_rows: the ids of "yes" and "no" for a
    reranker, whose output projection is then only those rows, as cls.output.weight."""
    moe = is_moe(config)
    plan = [("token_embd.weight", "model.embed_tokens.weight", GGML_BF16)]
    for layer in range(config["num_hidden_layers"]):
        for hf, gg in LAYER_TENSORS.items():
            hf_name = f"model.layers.{layer}.{hf}"
            if moe and hf.startswith("mlp."):
                continue
            plan.append((f"blk.{layer}.{gg}", hf_name, GGML_F32 if gg.endswith("norm.weight") else GGML_BF16))
        if moe:
            # the router stays F32, as llama.cpp's converter and llama-quantize keep it
            plan.append((f"blk.{layer}.{MOE_ROUTER[1]}", f"model.layers.{layer}.{MOE_ROUTER[0]}", GGML_F32))
            for hf, gg in MOE_EXPERTS:
                names = tuple(f"model.layers.{layer}.mlp.experts.{e}.{hf}.weight"
                              for e in range(config["num_experts"]))
                plan.append((f"blk.{layer}.{gg}", names, GGML_BF16))
    plan.append(("output_norm.weight", "model.norm.weight", GGML_F32))
    tied = config.get("tie_word_embeddings", False)
    head = "model.embed_tokens.weight" if tied else "lm_head.weight"
    if rerank_rows is not None:
        plan.append(("cls.output.weight", Rows(head, rerank_rows), GGML_BF16))
    elif not tied:
        plan.append(("output.weight", head, GGML_BF16))
    sources = [n for _, hf, _ in plan for n in source_names(hf)]
    missing = [n for n in sources if n not in tensors]
    if missing:
        fail(f"checkpoint lacks {len(missing)} tensors, first {missing[0]}")
    for _, hf, _ in plan:
        if isinstance(hf, Rows) and max(hf.ids) >= tensors[hf.name].entries[hf.name]["shape"][0]:
            fail(f"{hf.name} has no row {max(hf.ids)}")
        if isinstance(hf, tuple) and len({tuple(tensors[n].entries[n]["shape"]) for n in hf}) != 1:
            fail(f"experts {hf[0]} ... differ in shape")
    known = set(sources) | ({"lm_head.weight"} if tied else set())
    unexpected = sorted(set(tensors) - known)
    if unexpected:
        fail(f"checkpoint has {len(unexpected)} tensors this converter does not map, first {unexpected[0]}")
    return plan


def source_names(hf):
    """The Hugging Face tensors one planned tensor is made of."""
    if isinstance(hf, Rows):
        return (hf.name,)
    return hf if isinstance(hf, tuple) else (hf,)


def source_shape(tensors, hf):
    """The Hugging Face (numpy-order) shape of one planned tensor; a stack gets a leading expert dim."""
    if isinstance(hf, Rows):
        return [len(hf.ids)] + list(tensors[hf.name].entries[hf.name]["shape"][1:])
    if isinstance(hf, tuple):
        return [len(hf)] + list(tensors[hf[0]].entries[hf[0]]["shape"])
    return list(tensors[hf].entries[hf]["shape"])


def source_array(tensors, hf):
    if isinstance(hf, Rows):
        return np.ascontiguousarray(tensors[hf.name].array(hf.name)[hf.ids])
    if isinstance(hf, tuple):
        return np.stack([tensors[n].array(n) for n in hf])
    return tensors[hf].array(hf)


def tensor_bytes(array, ggml_type):
    if ggml_type == GGML_BF16:
        return array.tobytes()
    # bf16 is the top half of an f32: widening is exact.
    return (array.astype("<u4") << 16).view("<f4").tobytes()


def padding(n):
    return b"\0" * (-n % ALIGNMENT)


def convert(directory, out_path, rerank=False):
    config = load_json(directory, "config.json")
    if config.get("model_type") not in ("qwen3", "qwen3_moe"):
        fail(f"{directory}/config.json: model_type {config.get('model_type')!r}, expected 'qwen3' or 'qwen3_moe'")
    if rerank and config["model_type"] != "qwen3":
        fail(f"{directory}/config.json: --rerank converts a Qwen3-Reranker (model_type 'qwen3'), not "
             f"{config['model_type']!r}")
    tensors = open_checkpoint(directory)
    plan = tensor_plan(tensors, config, rerank_ids(directory) if rerank else None)
    kvs = metadata(directory, config, rerank)

    infos, offset = [], 0
    for gguf_name, hf_name, ggml_type in plan:
        shape = source_shape(tensors, hf_name)
        size = 2 * int(np.prod(shape)) * (2 if ggml_type == GGML_F32 else 1)
        dims = list(reversed(shape))
        infos.append(gguf_string(gguf_name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
                     + struct.pack("<IQ", ggml_type, offset))
        offset += size + (-size % ALIGNMENT)

    head = b"GGUF" + struct.pack("<IQQ", 3, len(plan), len(kvs)) + b"".join(kvs) + b"".join(infos)
    head += padding(len(head))
    tmp = out_path + ".part"
    with open(tmp, "wb") as f:
        f.write(head)
        for gguf_name, hf_name, ggml_type in plan:
            data = tensor_bytes(source_array(tensors, hf_name), ggml_type)
            f.write(data)
            f.write(padding(len(data)))
        total = f.tell()
    expected = len(head) + offset
    if total != expected:
        fail(f"{out_path}: wrote {total} bytes, planned {expected}")
    os.replace(tmp, out_path)
    print(f"{out_path}: {len(plan)} tensors, {len(kvs)} metadata entries, {total} bytes", file=sys.stderr)


def main():
    args = sys.argv[1:]
    rerank = args[:1] == ["--rerank"]
    if rerank:
        args = args[1:]
    if len(args) != 2:
        fail("usage: to_gguf.py [--rerank] CHECKPOINT_DIR OUT.gguf")
    convert(args[0], args[1], rerank)


if __name__ == "__main__":
    main()
