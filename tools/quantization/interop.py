#!/usr/bin/python3
"""Does llama.cpp take fs quantize's files as its own? One table per model, for every type.

For each model (the zoo's q-tied, ../shared/trained, models/full) and each type, makes the file with `fs quantize`
and with llama.cpp's `llama-quantize` (from the model's BF16 GGUF, with the same importance matrix), then:

- compares them with llama.cpp's gguf-py (compare_gguf.py): the whole file, every tensor's bytes, the metadata;
- runs `llama-bench -m FS_FILE -p 16 -n 4 -t T -r 1` (llama.cpp loads and runs fs's file);
- has llama.cpp score both files on the same text: `llama-perplexity --kl-divergence-base` saves its logits on its
  own file, then `--kl-divergence` compares them with its logits on fs's file and on its own file again. fs's file
  passes when the two reports (a line per window, and the statistics) are the same to the last printed digit (llama.cpp stores the base logits in 16 bits,
  so even its own file is a hair from zero KLD against itself: "no more than on its own file" is the test).

    tools/quantization/interop.py [--models zoo,trained,full] [--types Q8_0,...] [--full-types ...] -o interop.md

IQ2_XXS needs an importance matrix: the zoo's own (models/q-tied/imatrix.gguf, llama-imatrix's); for the trained
model `fs imatrix` over its eval.txt; for models/full `fs imatrix` over the first 8,000 characters of that text.
Both quantizers get the same one. Every command's output is kept under --work/logs. Python 3 and numpy (for
llama.cpp's gguf-py); llama.cpp's tools from --llama-bin.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import compare_gguf  # noqa: E402

TYPES = ["BF16", "F16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_K_S", "Q4_0", "Q2_K", "IQ2_XXS"]
PEERS = Path.home() / ".cache/fs-peers/llama.cpp"
BIG = 100_000_000  # files of models/full: deleted once checked unless --keep


class Runner:
    """Runs commands with their output in a log file each; a failure is recorded, not fatal."""

    def __init__(self, logs):
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)

    def run(self, name, command):
        start = time.monotonic()
        print(f"interop.py: {' '.join(map(str, command))}", file=sys.stderr, flush=True)
        result = subprocess.run([str(c) for c in command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace")
        (self.logs / f"{name}.log").write_text(result.stdout)
        return result.returncode, result.stdout, time.monotonic() - start


def last_line(output):
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"


def kl_report(output, chunks):
    """llama-perplexity's report: its line per window (all of them, or None) and its statistics block, without
    timings. llama.cpp logs from a thread of its own, and a process that exits at once may lose the end of its output
    (here, under load, often the whole statistics block): the windows' lines are then the report."""
    lines = output.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("chunk ") and "KL Divergence" in line)
    except StopIteration:
        return None
    windows = [line for line in lines[start + 1:] if re.match(r"^\s*\d+\s+\S", line)][:chunks]
    if len(windows) < chunks:
        return None
    text = output[output.find("====== Perplexity statistics ======"):] if "====== Perplexity" in output else ""
    statistics = [line for line in text.splitlines()
                  if line.strip() and not re.match(r"^(llama_perf|common_perf|llama_memory|~|main:)", line)]
    return {"windows": windows, "statistics": statistics if "Same top p" in text else None}


def same_report(theirs, own):
    """Every window's figures equal, and the statistics too where both processes got to print them."""
    if theirs["windows"] != own["windows"]:
        return False
    return theirs["statistics"] is None or own["statistics"] is None or theirs["statistics"] == own["statistics"]


def figure(report, label):
    """A figure of the statistics block, or of the last window's line (its running KLD and same top p)."""
    if report["statistics"]:
        match = re.search(re.escape(label) + r"\s*:?\s*(-?[\d.]+)", "\n".join(report["statistics"]))
        return match.group(1) if match else "?"
    # chunk, PPL ± u, ln ratio ± u, KLD ± u, Δp RMS ± u %, same top p ± u %
    numbers = re.findall(r"-?[\d.]+|-?nan", report["windows"][-1])
    return {"Mean    KLD": numbers[5], "Same top p": numbers[9]}.get(label, "?") + " (last window's running)"


def bench(runner, args, name, gguf):
    rc, out, _ = runner.run(name, [args.llama_bin / "llama-bench", "-m", gguf, "-p", "16", "-n", "4", "-t",
                                   args.threads, "-r", "1", "-o", "json"])
    if rc != 0:
        return {"ok": False, "error": last_line(out)}
    try:
        rows = json.loads(out[out.index("["):out.rindex("]") + 1])
    except ValueError:
        return {"ok": False, "error": "no JSON in llama-bench's output"}
    figures = {("pp" if r["n_prompt"] else "tg"): r["avg_ts"] for r in rows}
    return {"ok": True, "pp16": figures.get("pp"), "tg4": figures.get("tg")}


def perplexity(runner, args, name, gguf, base, compare):
    command = [args.llama_bin / "llama-perplexity", "-m", gguf, "-f", args.text, "-c", "128", "--chunks",
               args.chunks, "-t", args.threads, "-nr", "--kl-divergence-base", base]
    if compare:
        command.append("--kl-divergence")
    for _ in range(3):
        rc, out, _ = runner.run(name, command)
        # Under load a run here sometimes ends early or loses the end of its output (llama.cpp logs from a thread of
        # its own): run it again rather than compare a cut report.
        if rc == 0 and (not compare or "Same top p" in out.split("Perplexity statistics")[-1]):
            break
    if rc != 0:
        out += f"\n(exit status {rc})"
    return rc, out


def imatrix_for(model, runner, args, work):
    """The importance matrix both quantizers get for IQ2_XXS (made by fs imatrix where the model has none)."""
    if model == "zoo":
        return REPO / "models/q-tied/imatrix.gguf"
    out = work / "imatrix.gguf"
    if out.exists():
        return out
    text = args.text
    if model == "full":
        text = work / "imatrix-text.txt"
        text.write_text(Path(args.text).read_text(encoding="utf-8")[:8000], encoding="utf-8")
    source = args.trained if model == "trained" else args.full_dir
    rc, output, seconds = runner.run(f"{model}-fs-imatrix", [args.fs, "imatrix", source, "-f", text, "-o", out,
                                                            "-t", args.threads, "--backend", "cpu"])
    if rc != 0:
        sys.exit(f"interop.py: fs imatrix {source} failed: {last_line(output)}")
    print(f"interop.py: {model}: {last_line(output)}", file=sys.stderr)
    return out


def models(args):
    """Per model: the sources fs quantizes, llama-quantize's input, and a folder of llama.cpp's files to reuse."""
    return {
        "zoo": {"sources": [("GGUF", REPO / "models/q-tied/model-BF16.gguf")],
                "llama_input": REPO / "models/q-tied/model-BF16.gguf", "types": args.types},
        "trained": {"sources": [("safetensors", Path(args.trained)), ("GGUF", Path(args.trained) / "model-BF16.gguf")],
                    "llama_input": Path(args.trained) / "model-BF16.gguf", "types": args.types},
        "full": {"sources": [("safetensors", Path(args.full_dir))], "llama_input": Path(args.full_gguf),
                 "types": args.full_types, "bench_types": args.full_bench_types, "reuse": args.full_reuse},
    }


def check_model(model, spec, runner, args):
    work = args.work / model
    work.mkdir(parents=True, exist_ok=True)
    records = []
    for quant in spec["types"]:
        imatrix = imatrix_for(model, runner, args, work) if quant == "IQ2_XXS" else None
        with_imatrix = ["--imatrix", imatrix] if imatrix else []
        reused = Path(spec["reuse"]) / f"full-{quant}.gguf" if spec.get("reuse") else None
        if reused and reused.exists():
            llama_file, llama_seconds = reused, None
        else:
            llama_file = work / f"llama-{quant}.gguf"
            rc, out, llama_seconds = runner.run(f"{model}-llama-quantize-{quant}", [
                args.llama_bin / "llama-quantize", *with_imatrix, spec["llama_input"], llama_file, quant,
                args.threads])
            if rc != 0:
                records.append({"model": model, "type": quant, "error": "llama-quantize: " + last_line(out)})
                continue
        base = work / f"base-{quant}.kld"
        rc, out = perplexity(runner, args, f"{model}-llama-base-{quant}", llama_file, base, False)
        own = None
        if rc == 0:
            rc, out = perplexity(runner, args, f"{model}-llama-own-{quant}", llama_file, base, True)
            own = kl_report(out, int(args.chunks)) if rc == 0 else None
        own_error = None if own else "llama-perplexity on its own file: " + last_line(out)
        for source_kind, source in spec["sources"]:
            record = {"model": model, "type": quant, "source": source_kind, "source_path": str(source),
                      "llama_file": str(llama_file), "llama_quantize_s": llama_seconds,
                      "imatrix": str(imatrix) if imatrix else None}
            records.append(record)
            fs_file = work / f"fs-{source_kind}-{quant}.gguf"
            rc, out, seconds = runner.run(f"{model}-fs-quantize-{source_kind}-{quant}", [
                args.fs, "quantize", source, "-o", fs_file, "--type", quant, *with_imatrix, "-t", args.threads])
            record["fs_quantize_s"] = seconds
            if rc != 0:
                record["error"] = "fs quantize: " + last_line(out)
                continue
            record["compare"] = compare_gguf.compare(str(fs_file), str(llama_file), args.gguf)
            if "bench_types" not in spec or quant in spec["bench_types"]:
                record["bench"] = bench(runner, args, f"{model}-bench-{source_kind}-{quant}", fs_file)
            if own:
                rc, out = perplexity(runner, args, f"{model}-llama-on-fs-{source_kind}-{quant}", fs_file, base, True)
                theirs = kl_report(out, int(args.chunks)) if rc == 0 else None
                record["kl"] = {"on_fs_file": theirs, "on_own_file": own,
                                "same_report": bool(theirs) and same_report(theirs, own),
                                "error": None if theirs else "llama-perplexity on fs's file: " + last_line(out)}
            else:
                record["kl"] = {"error": own_error}
            if not args.keep and fs_file.stat().st_size > BIG:
                fs_file.unlink()
        base.unlink(missing_ok=True)
        if not args.keep and llama_file.parent == work and llama_file.exists() and llama_file.stat().st_size > BIG:
            llama_file.unlink()
    return records


def verdict(record):
    """fs's file passes when its tensors are llama-quantize's, llama.cpp's logits on it are those on its own file
    and llama-bench runs it; metadata differences are shown beside it, for a reader to weigh (see the table)."""
    compare = record.get("compare")
    kl = record.get("kl", {})
    bench_ok = record.get("bench", {"ok": True})["ok"]
    return bool(compare and compare["tensors_identical"] == compare["tensors"] == compare["tensors_b"]
                and kl.get("same_report") and bench_ok)


def table(records, args):
    lines = []
    for model in dict.fromkeys(r["model"] for r in records):
        rows = [r for r in records if r["model"] == model]
        lines += [f"### {model}", "",
                  "| type | fs from | fs file | tensors identical | whole file | model metadata | llama-bench on fs's "
                  "file: pp16 / tg4 tok/s | llama.cpp on fs's file vs its own: mean KLD, same top p | same report "
                  "| fs quantize s | llama-quantize s | pass |",
                  "|---|---|---:|---|---|---|---|---|---|---:|---:|---|"]
        for r in rows:
            if "compare" not in r:
                lines.append(f"| {r['type']} | {r.get('source', '—')} | — | — | — | — | — | — | — | — | — | "
                             f"error: {r['error']} |")
                continue
            c, kl, b = r["compare"], r.get("kl", {}), r.get("bench")
            same = f"{c['tensors_identical']}/{c['tensors']}" + ("" if c["tensors_identical"] == c["tensors"] else
                                                               " (" + "; ".join(c["tensor_differences"][:2]) + ")")
            metadata = "same" if not c["model_metadata_differences"] else ", ".join(c["model_metadata_differences"])
            described = [k for k in c["metadata_only_in_a"] + c["metadata_only_in_b"] + c["metadata_different"]
                         if not k.startswith("GGUF.") and k not in c["model_metadata_differences"]]
            if described:
                metadata += " (differs: " + ", ".join(described) + ")"
            if b is None:
                benched = "not run"
            elif b["ok"]:
                benched = f"{b['pp16']:.1f} / {b['tg4']:.1f}"
            else:
                benched = "FAILED: " + b["error"]
            if kl.get("on_fs_file"):
                report = kl["on_fs_file"]
                own = kl["on_own_file"]
                kld = (f"{figure(report, 'Mean    KLD')}, {figure(report, 'Same top p')} % "
                       f"(own: {figure(own, 'Mean    KLD')}, {figure(own, 'Same top p')} %)")
                same_report = "yes" if kl["same_report"] else "NO"
            else:
                kld, same_report = kl.get("error") or "—", "—"
            llama_s = "reused" if r["llama_quantize_s"] is None else f"{r['llama_quantize_s']:.1f}"
            lines.append(f"| {r['type']} | {r['source']} | {c['bytes_a'] / 1e6:.2f} MB | {same} | "
                         f"{'identical' if c['identical_file'] else 'differs'} | {metadata} | {benched} | {kld} | "
                         f"{same_report} | {r['fs_quantize_s']:.1f} | {llama_s} | "
                         f"{'yes' if verdict(r) else 'NO'} |")
        lines.append("")
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    head = [f"fs {commit}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {args.threads} threads; "
            f"llama.cpp from {args.llama_bin}; text {args.text}, llama-perplexity -c 128 --chunks {args.chunks} -nr. "
            f"{sum(map(verdict, records))} of {len(records)} files pass: every tensor llama-quantize's, llama.cpp's logits on "
            f"them its logits on its own file, llama-bench runs them. \"model metadata\" names the keys llama.cpp "
            f"reads that differ (then the \"differs\" ones it only prints).", ""]
    return "\n".join(head + lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="zoo,trained,full", help="which of zoo, trained, full (default: all)")
    parser.add_argument("--types", default=",".join(TYPES), help="types for the zoo and trained (default: all ten)")
    parser.add_argument("--full-types", default=",".join(TYPES), help="types for models/full (default: all ten)")
    parser.add_argument("--full-bench-types", default="Q8_0,Q4_K_M,Q2_K",
                        help="the types llama-bench runs for models/full, which is slow (default: %(default)s)")
    parser.add_argument("--trained", default=str(REPO.parent / "shared/trained"),
                        help="the trained checkpoint, with model-BF16.gguf and eval.txt (default: ../shared/trained)")
    parser.add_argument("--full-dir", default=str(REPO / "models/full"), help="models/full's safetensors directory")
    parser.add_argument("--full-gguf", default="/work/bench/full-BF16.gguf",
                        help="models/full as a BF16 GGUF file, llama-quantize's input (default: %(default)s)")
    parser.add_argument("--full-reuse", help="a folder of llama-quantize's full-TYPE.gguf files to use instead of "
                        "making them again")
    parser.add_argument("--text", help="the text llama-perplexity scores (default: the trained model's eval.txt)")
    parser.add_argument("--chunks", default="8", help="llama-perplexity windows of 128 tokens (default 8)")
    parser.add_argument("-t", "--threads", default="2")
    parser.add_argument("--fs", default=str(REPO / "fs"))
    parser.add_argument("--llama-bin", type=Path, default=PEERS / "build/bin")
    parser.add_argument("--gguf-py", default=str(PEERS / "gguf-py"))
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "fs-interop")
    parser.add_argument("--keep", action="store_true", help="keep files over 100 MB once checked")
    parser.add_argument("-o", "--output", help="the markdown tables (default: stdout)")
    parser.add_argument("--json", help="every record, as JSON, here")
    args = parser.parse_args()
    args.text = args.text or str(Path(args.trained) / "eval.txt")
    for name in ["types", "full_types", "full_bench_types"]:
        setattr(args, name, [t for t in getattr(args, name).split(",") if t])
    args.gguf = compare_gguf.load_gguf_py(args.gguf_py)
    runner = Runner(args.work / "logs")

    records = []
    specs = models(args)
    for model in args.models.split(","):
        records += check_model(model, specs[model], runner, args)
        markdown = table(records, args)  # written after each model, so a long run shows its progress
        if args.output:
            Path(args.output).write_text(markdown + "\n", encoding="utf-8")
        if args.json:
            Path(args.json).write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    if not args.output:
        sys.stdout.write(markdown + "\n")
    sys.exit(0 if all(map(verdict, records)) else 1)


if __name__ == "__main__":
    main()
