#!/usr/bin/python3
"""Whether two GGUF files hold the same model: the whole file, each tensor's bytes, and the metadata.

    tools/quantization/compare_gguf.py A.gguf B.gguf [--gguf-py DIR]

Prints one JSON object: `identical_file` (byte for byte), `tensors` (how many in A), `tensors_identical` (same name,
position, type, shape and data bytes in both), `tensor_differences` (the first few that are not, and why), and the
metadata keys only in A, only in B, or with different values (`GGUF.*` are the header's counts and version). Exit
status 0 when every tensor is identical and the metadata differs in no key llama.cpp reads to build the model (all
keys but the `general.*` and `quantize.*` ones, which name and describe the file and how it was made); 1 otherwise.

Reads the files with llama.cpp's own gguf-py (`--gguf-py`, default ~/.cache/fs-peers/llama.cpp/gguf-py), so the
verdict does not rest on fs's GGUF reader; numpy is the one package it needs.
"""
import argparse
import filecmp
import json
import os
import sys
from pathlib import Path

DEFAULT_GGUF_PY = Path.home() / ".cache/fs-peers/llama.cpp/gguf-py"
# Keys that describe the file rather than the model: of general.* llama.cpp builds the model from
# general.architecture (checked anyway) and prints the rest (general.name, …); quantize.imatrix.* record which
# importance matrix made the file.
DESCRIPTIVE_PREFIXES = ("general.", "quantize.")
CHECKED_GENERAL_KEYS = {"general.architecture", "general.alignment", "general.file_type"}


def load_gguf_py(directory):
    sys.path.insert(0, str(directory))
    try:
        import gguf  # noqa: F401
    except ImportError as e:
        sys.exit(f"compare_gguf.py: cannot import gguf-py from {directory}: {e}")
    return sys.modules["gguf"]


def field_value(field):
    """A metadata value as plain Python (arrays as lists), with its type chain, for comparison."""
    return [int(t) for t in field.types], field.contents()


def compare(a, b, gguf):
    """The comparison of two GGUF files as a dict (see the module's docstring)."""
    ra, rb = gguf.GGUFReader(a), gguf.GGUFReader(b)
    result = {"a": str(a), "b": str(b), "bytes_a": os.path.getsize(a), "bytes_b": os.path.getsize(b)}
    result["identical_file"] = result["bytes_a"] == result["bytes_b"] and filecmp.cmp(a, b, shallow=False)

    tensors_b = {t.name: (i, t) for i, t in enumerate(rb.tensors)}
    same, differences = 0, []
    for i, ta in enumerate(ra.tensors):
        entry = tensors_b.get(ta.name)
        if entry is None:
            differences.append(f"{ta.name}: only in A")
            continue
        j, tb = entry
        why = []
        if i != j:
            why.append(f"position {i} vs {j}")
        if ta.tensor_type != tb.tensor_type:
            why.append(f"type {ta.tensor_type.name} vs {tb.tensor_type.name}")
        shape_a, shape_b = [int(n) for n in ta.shape], [int(n) for n in tb.shape]
        if shape_a != shape_b:
            why.append(f"shape {shape_a} vs {shape_b}")
        elif ta.n_bytes != tb.n_bytes or (ra.data[ta.data_offset:ta.data_offset + ta.n_bytes]
                                          != rb.data[tb.data_offset:tb.data_offset + tb.n_bytes]).any():
            why.append("data bytes differ")
        if why:
            differences.append(f"{ta.name}: {', '.join(why)}")
        else:
            same += 1
    names_a = {t.name for t in ra.tensors}
    differences += [f"{t.name}: only in B" for t in rb.tensors if t.name not in names_a]
    result.update(tensors=len(ra.tensors), tensors_b=len(rb.tensors), tensors_identical=same,
                  tensor_differences=differences[:10], tensor_difference_count=len(differences))

    fa = {name: field_value(f) for name, f in ra.fields.items()}
    fb = {name: field_value(f) for name, f in rb.fields.items()}
    result["metadata_only_in_a"] = sorted(set(fa) - set(fb))
    result["metadata_only_in_b"] = sorted(set(fb) - set(fa))
    result["metadata_different"] = sorted(k for k in set(fa) & set(fb) if fa[k] != fb[k])
    read_by_llama = [k for k in result["metadata_only_in_a"] + result["metadata_only_in_b"]
                     + result["metadata_different"]
                     if not k.startswith("GGUF.") and (not k.startswith(DESCRIPTIVE_PREFIXES) or k in CHECKED_GENERAL_KEYS)]
    result["model_metadata_differences"] = read_by_llama
    result["same_model"] = (same == len(ra.tensors) == len(rb.tensors) and not read_by_llama)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--gguf-py", default=os.environ.get("GGUF_PY", str(DEFAULT_GGUF_PY)),
                        help="llama.cpp's gguf-py directory (default: %(default)s)")
    args = parser.parse_args()
    result = compare(args.a, args.b, load_gguf_py(args.gguf_py))
    print(json.dumps(result, indent=2))
    sys.exit(0 if result["same_model"] else 1)


if __name__ == "__main__":
    main()
