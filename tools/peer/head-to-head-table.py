#!/usr/bin/env python3
"""The markdown table of docs/PERFORMANCE.md's head-to-head sections from quantized-head-to-head.sh's output.

    tools/peer/quantized-head-to-head.sh DIR | tee run.log; tools/peer/head-to-head-table.py run.log

One row per type: fs's and llama.cpp's prefill and decode (mean ± deviation as llama-bench prints them), fs ÷ llama.cpp,
the read bandwidth measured before that type and what fs's CPU backend ran (its description, from fs bench).
"""
import re
import sys

ROW = re.compile(r"\|\s*(pp|tg)(\d+)\s*\|\s*([\d.]+)\s*±\s*([\d.]+)\s*\|\s*$")


def main(path):
    types, current = [], None
    for line in open(path, encoding="utf-8"):
        header = re.match(r"## (\S+) .*\"read_gb_s\": ([\d.]+)", line)
        if header:
            current = {"type": header.group(1), "bandwidth": header.group(2), "fs": {}, "llama": {}, "backend": ""}
            types.append(current)
            continue
        row = ROW.search(line)
        if not (current and row):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        kind = f"{row.group(1)}{row.group(2)}"
        if cells[3].startswith("cpu ("):  # fs bench on the CPU backend
            current["fs"][row.group(1)] = (kind, row.group(3), row.group(4))
            current["backend"] = cells[3][len("cpu ("):].split(", Vector API")[0]
        elif cells[3] == "CPU" and row.group(1) not in current["llama"]:  # llama-bench (ik_llama.cpp's comes later)
            current["llama"][row.group(1)] = (kind, row.group(3), row.group(4))
    if not types:
        sys.exit(f"head-to-head-table: {path} holds no '## TYPE … bandwidth' sections of quantized-head-to-head.sh")
    print("| weights | fs prefill | llama.cpp prefill | × | fs decode | llama.cpp decode | × | read bandwidth, 2 threads"
          " | fs's backend |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in types:
        cells = [t["type"]]
        for phase in ("pp", "tg"):
            fs, llama = t["fs"].get(phase), t["llama"].get(phase)
            cells.append(f"{fs[0]} {fs[1]} ± {fs[2]}" if fs else "—")
            cells.append(f"{llama[1]} ± {llama[2]}" if llama else "—")
            cells.append(f"{float(fs[1]) / float(llama[1]):.2f}" if fs and llama else "—")
        cells += [f"{t['bandwidth']} GB/s", t["backend"]]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: head-to-head-table.py LOG (quantized-head-to-head.sh's output)")
    main(sys.argv[1])
