#!/usr/bin/python3
"""Quality of quantized GGUF files against their base model, as a markdown table.

For a base model (a Hugging Face directory or a GGUF file) and GGUF files of the same weights, runs
`fs perplexity GGUF -f TEXT -c N --kl-divergence-base BASE --json` for each (and `fs perplexity BASE` for the base's
own row) and writes one table: format, size, bits per weight, perplexity, perplexity ratio, mean KL divergence and
same top p, each with llama-perplexity's ± where it has one. This is the quality half of docs/QUANTIZATION.md.

    tools/quantization/evaluate.py ../shared/trained ../shared/trained/model-*.gguf \\
        -f ../shared/trained/eval.txt -c 128 -o quality.md

The standard library only; fs is run through ./fs at the repository root (or --fs).
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# llama.cpp's llama_ftype (include/llama.h): general.file_type of a GGUF file.
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS",
    20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
    28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
}


def fs_json(fs, args):
    """Runs fs with --json; its progress goes to our stderr; a failure stops the script with fs's own line."""
    result = subprocess.run([fs, *args, "--json"], stdout=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"evaluate.py: fs {' '.join(args)} failed (exit {result.returncode})")
    return json.loads(result.stdout)


def describe(fs, model):
    """The format name, bytes on disk and bits per weight of a model, from fs inspect."""
    info = fs_json(fs, ["inspect", model])
    path = Path(model)
    if info["format"] == "gguf":
        file_type = info["gguf"]["metadata"].get("general.file_type", {}).get("value")
        name = FILE_TYPES.get(file_type, f"file type {file_type}")
        size = path.stat().st_size
    else:
        name = info["config"]["torch_dtype"].replace("bfloat16", "BF16").replace("float16", "F16") + " (safetensors)"
        index = path / "model.safetensors.index.json"
        files = set(json.loads(index.read_text())["weight_map"].values()) if index.exists() else ["model.safetensors"]
        size = sum((path / f).stat().st_size for f in files)
    totals = info["totals"]
    return name, size, 8 * totals["bytes"] / totals["parameters"]


def plus_minus(estimate, digits=None, scale=1.0):
    """value ± uncertainty with a fixed number of decimals, or by default three significant digits of the value."""
    value, uncertainty = estimate["value"] if "value" in estimate else estimate["mean"], estimate["uncertainty"]
    if value is None:
        return "—"
    value, uncertainty = scale * value, scale * (uncertainty or 0)
    if digits is None:
        digits = max(0, 2 - math.floor(math.log10(abs(value)))) if value else 0
    return f"{value:.{digits}f} ± {uncertainty:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the base model: a Hugging Face directory or a GGUF file")
    parser.add_argument("ggufs", nargs="+", help="GGUF files of the same weights")
    parser.add_argument("-f", "--file", required=True, help="the evaluation text (UTF-8)")
    parser.add_argument("-c", "--ctx", type=int, default=512, help="window size (default 512, as llama-perplexity)")
    parser.add_argument("--chunks", type=int, help="at most this many windows")
    parser.add_argument("-t", "--threads", type=int, help="fs threads (default: fs's)")
    parser.add_argument("--backend", default="cpu", help="fs backend (default cpu)")
    parser.add_argument("--fs", default=str(REPO / "fs"), help="the fs launcher (default: the repository's ./fs)")
    parser.add_argument("-o", "--output", help="write the markdown here (default: stdout)")
    parser.add_argument("--json", help="also write every fs perplexity result, as one JSON array, here")
    args = parser.parse_args()

    common = ["-f", args.file, "-c", str(args.ctx), "--backend", args.backend]
    if args.chunks:
        common += ["--chunks", str(args.chunks)]
    if args.threads:
        common += ["-t", str(args.threads)]

    ggufs = [g for g in args.ggufs if Path(g).resolve() != Path(args.base).resolve()]
    described = {model: describe(args.fs, model) for model in [args.base, *ggufs]}  # a bad file fails early
    print(f"evaluate.py: {args.base} (base)", file=sys.stderr)
    base = fs_json(args.fs, ["perplexity", args.base, *common])
    rows = [(args.base, described[args.base], base)]
    for gguf in ggufs:
        print(f"evaluate.py: {gguf}", file=sys.stderr)
        result = fs_json(args.fs, ["perplexity", gguf, *common, "--kl-divergence-base", args.base])
        rows.append((gguf, described[gguf], result))
    rows[1:] = sorted(rows[1:], key=lambda row: -row[1][2])  # most bits per weight first

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    lines = [
        f"Quality against `{args.base}` on `{args.file}`: `fs perplexity -c {args.ctx}` "
        f"({base['windows']} windows, {base['tokens_scored']} tokens scored, second half of each window), "
        f"`--kl-divergence-base` for the others; fs {commit}, {datetime.date.today().isoformat()}, "
        f"backend {args.backend}. ± is llama-perplexity's one-sigma uncertainty.",
        "",
        "| format | size | bpw | PPL | PPL ratio | mean KLD | same top p |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for model, (name, size, bpw), result in rows:
        ppl = plus_minus(result["ppl"], 3)
        kl = result.get("kl_divergence")
        if kl is None:
            ratio, kld, same = "1", "—", "—"
        else:
            ratio = plus_minus(kl["ppl_ratio"], 5)
            kld = plus_minus(kl["kld"])
            same = plus_minus(kl["same_top_p"], 2, 100) + " %"
        lines.append(f"| {name} | {size / 1e6:.2f} MB | {bpw:.2f} | {ppl} | {ratio} | {kld} | {same} |")
    table = "\n".join(lines) + "\n"
    if args.output:
        Path(args.output).write_text(table, encoding="utf-8")
    else:
        sys.stdout.write(table)
    if args.json:
        Path(args.json).write_text(json.dumps([result for _, _, result in rows], indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
