#!/usr/bin/env python3
"""What a user gains over the server's own compression, corpus by corpus, from one `run.sh --format json` report:
the headline table of docs/benchmarks.md (Markdown on stdout) and, with --svg, its chart. Standard library only.

    python3 benchmarks/storage/gains.py benchmarks/results/storage-2026-11-28-reads.json [--svg docs/benchmarks-gains.svg]

Every column is a factor "ours against what the server gives without us"; above 1 we win, below 1 we lose:
  disk vs snappy     plain BSON under snappy (MongoDB's default) / ours under snappy: table file bytes
  disk vs zstd-6     plain BSON under zstd-6 (the server's best block compressor) / ours under snappy
  wire vs zstd       a find reply of 101 documents, bytes per document: plain under compressors=zstd / ours without
                     wire compression, and / ours under compressors=zstd too
  memory             WiredTiger cache bytes after reading everything back: plain / ours (tables under snappy)
  reads/CPU s        random point reads with a cache of 1/4 of the plain table, reads a CPU second (1 / the process's
                     CPU per read, eviction included): ours under snappy / plain under snappy, and / plain under zstd-6
                     (the file in the OS page cache, so a miss is CPU work; wall-clock reads a second are in the report)
  client decode      the client's CPU to read one document: plain / ours (below 1: ours costs more)
"""
import json
import math
import sys

COLUMNS = [
    ("diskSnappy", "disk vs snappy", "#9ecae1"),
    ("diskZstd", "disk vs zstd-6", "#08519c"),
    ("wireZstd", "wire vs compressors=zstd", "#74c476"),
    ("wireOursZstd", "wire, both under zstd", "#238b45"),
    ("memory", "memory (cache)", "#fd8d3c"),
    ("readsSnappy", "reads/CPU s vs snappy", "#fdae6b"),
    ("readsZstd", "reads/CPU s vs zstd-6", "#d62728"),
    ("decode", "client CPU a read", "#756bb1"),
]


def gains(r):
    g = {"diskSnappy": r["plain"]["snappy"] / r["compressed"]["snappy"],
         "diskZstd": r["plain"]["zstd"] / r["compressed"]["snappy"],
         "memory": r["cache"]["plain"] / r["cache"]["compressed"]}
    wire = (r.get("wire") or {}).get("read101")
    if wire:
        g["wireZstd"] = wire["zstd"] / wire["ours"]
        g["wireOursZstd"] = wire["zstd"] / wire["oursZstd"]
    reads = r.get("reads")
    if reads:
        ours = reads["oursSnappy"]["small"]["cpuUsPerRead"]
        g["readsSnappy"] = reads["plainSnappy"]["small"]["cpuUsPerRead"] / ours
        g["readsZstd"] = reads["plainZstd"]["small"]["cpuUsPerRead"] / ours
    decode = r.get("decode") or {}
    if decode.get("oursCpuNsPerDocument"):
        g["decode"] = decode["plainCpuNsPerDocument"] / decode["oursCpuNsPerDocument"]
    return g


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def load(path):
    corpora = []
    for line in open(path, encoding="utf-8"):
        if line.strip():
            record = json.loads(line)
            if "corpus" in record:
                corpora.append(record)
    if not corpora:
        sys.exit(f"no corpus objects in {path}")
    return corpora


def rows(corpora):
    out = [(r["corpus"], r["bsonBytes"] / r["documents"], gains(r)) for r in corpora]
    keys = [k for k, _, _ in COLUMNS]
    mean = {k: geomean([g[k] for _, _, g in out]) for k in keys if all(k in g for _, _, g in out)}
    return out, mean


def size(n):
    return f"{n / 1000:.1f} KB" if n >= 1000 else f"{n:.0f} B"


def markdown(corpora):
    out, mean = rows(corpora)
    cell = lambda v: "-" if v is None else (f"**{v:.2f}x**" if v >= 1 else f"{v:.2f}x")
    lines = ["| corpus (avg BSON) | " + " | ".join(title for _, title, _ in COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for name, avg, g in out:
        lines.append(f"| {name} ({size(avg)}) | " + " | ".join(cell(g.get(k)) for k, _, _ in COLUMNS) + " |")
    lines.append(f"| geometric mean ({len(out)}) | " + " | ".join(cell(mean.get(k)) for k, _, _ in COLUMNS) + " |")
    return "\n".join(lines)


def svg(corpora, target):
    out, mean = rows(corpora)
    groups = [(name, g) for name, _, g in out] + [("geometric mean", mean)]
    values = [v for _, g in groups for v in g.values()]
    lo = 2 ** math.floor(math.log2(min(values + [1])))
    hi = 2 ** math.ceil(math.log2(max(values + [1])))
    width, left, right, top, plot_height, bottom = 980, 60, 20, 72, 340, 40
    height = top + plot_height + bottom
    slot = (width - left - right) / len(groups)
    bar = slot * 0.88 / len(COLUMNS)
    sy = lambda v: top + plot_height - (math.log2(v) - math.log2(lo)) / (math.log2(hi) - math.log2(lo)) * plot_height
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="18" font-size="14">Ours against the server\'s own compression (log scale; above 1x we win, below 1x we lose)</text>']
    lx, ly = left, 30
    for i, (_, label, colour) in enumerate(COLUMNS):
        if i == 4:
            lx, ly = left, 48
        parts.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{lx + 14}" y="{ly + 9}">{label}</text>')
        lx += 14 + 7 * len(label) + 20
    v = lo
    while v <= hi:
        y = sy(v)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="{"#666" if v == 1 else "#eee"}"/>')
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v:g}x</text>')
        v *= 2
    one = sy(1)
    for i, (name, g) in enumerate(groups):
        x0 = left + i * slot + slot * 0.06
        if name == "geometric mean":
            parts.append(f'<rect x="{left + i * slot + 2:.1f}" y="{top}" width="{slot - 4:.1f}" height="{plot_height}" fill="#f4f4f4"/>')
        for j, (key, _, colour) in enumerate(COLUMNS):
            if key not in g:
                continue
            x, y = x0 + j * bar, sy(g[key])
            parts.append(f'<rect x="{x:.1f}" y="{min(y, one):.1f}" width="{bar - 1:.1f}" height="{max(abs(one - y), 1):.1f}" fill="{colour}"/>')
            label_y = min(y, one) - 3 if g[key] >= 1 else max(y, one) + 9
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{label_y:.1f}" text-anchor="middle" font-size="7">{g[key]:.2g}</text>')
        parts.append(f'<text x="{left + i * slot + slot / 2:.1f}" y="{top + plot_height + 16}" text-anchor="middle">{name}</text>')
    parts.append("</svg>")
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: gains.py REPORT.json [--svg CHART.svg]")
    corpora = load(argv[0])
    print(markdown(corpora))
    if len(argv) == 3 and argv[1] == "--svg":
        svg(corpora, argv[2])
    elif len(argv) != 1:
        sys.exit("usage: gains.py REPORT.json [--svg CHART.svg]")


if __name__ == "__main__":
    main(sys.argv[1:])
