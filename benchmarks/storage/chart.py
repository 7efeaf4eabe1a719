#!/usr/bin/env python3
"""Draws the storage chart from a `run.sh --format json` report: per corpus, the ratio (plain BSON bytes / table file
bytes) of plain BSON under snappy, zlib and zstd-6 and of the serializer's documents under snappy and zstd-6, plus the
geometric means; a second panel shows the cache bytes of ours over plain. Standard library only, same style as
benchmarks/chart.py.

    python3 benchmarks/storage/chart.py benchmarks/results/storage-2026-11-23.json docs/benchmarks-storage.svg [READS.svg]

With READS.svg (reports with the read phase): per corpus, the reads of each table in a cache of 1/4 of the plain
table, over those of plain under snappy (log scale): reads a CPU second with the file in the OS page cache, and reads a
second by the wall clock with direct I/O.
"""
import json
import math
import sys

SERIES = [("plain", "snappy", "plain, snappy (MongoDB default)", "#9ecae1"),
          ("plain", "zlib", "plain, zlib", "#4292c6"),
          ("plain", "zstd", "plain, zstd-6", "#08519c"),
          ("compressed", "snappy", "ours, snappy", "#fd8d3c"),
          ("compressed", "zstd", "ours, zstd-6", "#d62728")]


def main(source, target):
    corpora = []
    for line in open(source, encoding="utf-8"):
        line = line.strip()
        if line:
            record = json.loads(line)
            if "corpus" in record:
                corpora.append(record)
    if not corpora:
        sys.exit(f"no corpus objects in {source}")

    def ratio(r, group, compressor):
        return r["bsonBytes"] / r[group][compressor]

    groups = [(f"{r['corpus']}", [ratio(r, g, c) for g, c, _, _ in SERIES], r["cache"]["compressed"] / r["cache"]["plain"])
              for r in corpora]
    mean = lambda values: math.exp(sum(math.log(v) for v in values) / len(values))
    groups.append(("geometric mean", [mean([g[1][i] for g in groups]) for i in range(len(SERIES))], mean([g[2] for g in groups])))

    width, left, right, top = 900, 60, 20, 50
    plot_height, cache_height, gap, bottom = 300, 110, 70, 40
    height = top + plot_height + gap + cache_height + bottom
    inner = width - left - right
    slot = inner / len(groups)
    bar = slot * 0.8 / len(SERIES)
    y1 = math.ceil(max(max(g[1]) for g in groups))
    sy = lambda v: top + plot_height - v / y1 * plot_height

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">WiredTiger 3.2.1, MongoDB collection settings: plain BSON bytes / table file bytes (higher is better)</text>']
    lx = left
    for _, _, label, colour in SERIES:
        out.append(f'<rect x="{lx}" y="28" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{lx + 14}" y="37">{label}</text>')
        lx += 14 + 7 * len(label) + 18
    for v in range(0, y1 + 1):
        y = sy(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v}</text>')
    out.append(f'<text x="16" y="{top + plot_height / 2}" transform="rotate(-90 16 {top + plot_height / 2})" text-anchor="middle">ratio</text>')
    for i, (name, values, _) in enumerate(groups):
        x0 = left + i * slot + slot * 0.1
        if name == "geometric mean":
            out.append(f'<rect x="{left + i * slot + 2:.1f}" y="{top}" width="{slot - 4:.1f}" height="{plot_height}" fill="#f4f4f4"/>')
        for j, v in enumerate(values):
            x = x0 + j * bar
            out.append(f'<rect x="{x:.1f}" y="{sy(v):.1f}" width="{bar - 1:.1f}" height="{top + plot_height - sy(v):.1f}" fill="{SERIES[j][3]}"/>')
            out.append(f'<text x="{x + bar / 2:.1f}" y="{sy(v) - 3:.1f}" text-anchor="middle" font-size="9">{v:.1f}</text>')
        out.append(f'<text x="{left + i * slot + slot / 2:.1f}" y="{top + plot_height + 16}" text-anchor="middle">{name}</text>')
    out.append(f'<line x1="{left}" y1="{top + plot_height}" x2="{width - right}" y2="{top + plot_height}" stroke="#333"/>')

    # Cache panel: bytes in the cache after reading everything back, ours / plain (lower is better).
    ctop = top + plot_height + gap
    out.append(f'<text x="{left}" y="{ctop - 12}" font-size="14">Cache bytes after reading every document back, ours / plain (lower is better; tables under snappy)</text>')
    sc = lambda v: ctop + cache_height - v * cache_height
    for v in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line x1="{left}" y1="{sc(v):.1f}" x2="{width - right}" y2="{sc(v):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 8}" y="{sc(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<line x1="{left}" y1="{sc(1 / 3):.1f}" x2="{width - right}" y2="{sc(1 / 3):.1f}" stroke="#999" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{width - right - 4}" y="{sc(1 / 3) - 4:.1f}" text-anchor="end" fill="#666" font-size="10">1/3 (target)</text>')
    for i, (name, _, cache) in enumerate(groups):
        x = left + i * slot + slot * 0.3
        out.append(f'<rect x="{x:.1f}" y="{sc(cache):.1f}" width="{slot * 0.4:.1f}" height="{ctop + cache_height - sc(cache):.1f}" fill="#2ca02c"/>')
        out.append(f'<text x="{x + slot * 0.2:.1f}" y="{sc(cache) - 3:.1f}" text-anchor="middle" font-size="10">{cache:.2f}</text>')
        out.append(f'<text x="{left + i * slot + slot / 2:.1f}" y="{ctop + cache_height + 16}" text-anchor="middle">{name}</text>')
    out.append(f'<line x1="{left}" y1="{ctop + cache_height}" x2="{width - right}" y2="{ctop + cache_height}" stroke="#333"/>')
    out.append("</svg>")
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


READ_SERIES = [("plainSnappy", "small", "plain, snappy, reads a CPU s", "#9ecae1"),
               ("plainZstd", "small", "plain, zstd-6, reads a CPU s", "#08519c"),
               ("oursSnappy", "small", "ours, snappy, reads a CPU s", "#fd8d3c"),
               ("plainSnappy", "smallDirect", "plain, snappy, direct I/O, reads/s", "#c6dbef"),
               ("plainZstd", "smallDirect", "plain, zstd-6, direct I/O, reads/s", "#6baed6"),
               ("oursSnappy", "smallDirect", "ours, snappy, direct I/O, reads/s", "#fdd0a2")]


def reads_chart(source, target):
    corpora = [json.loads(line) for line in open(source, encoding="utf-8") if line.strip()]
    corpora = [r for r in corpora if r.get("reads")]
    if not corpora:
        sys.exit(f"no read phase in {source}")

    def value(r, key, phase):
        # the OS page cache: reads a CPU second (a miss is CPU work, and CPU time is what a busy machine moves least);
        # direct I/O: reads a second by the wall clock (a miss waits for the disk, which CPU time does not count)
        p = r["reads"][key][phase]
        base = r["reads"]["plainSnappy"][phase]
        if "error" in p or "error" in base:
            return None
        return base["cpuUsPerRead"] / p["cpuUsPerRead"] if phase == "small" else p["readsPerSecond"] / base["readsPerSecond"]

    groups = [(r["corpus"], [value(r, k, ph) for k, ph, _, _ in READ_SERIES]) for r in corpora]
    mean = lambda values: math.exp(sum(math.log(v) for v in values) / len(values))
    groups.append(("geometric mean", [mean([g[1][i] for g in groups]) if all(g[1][i] for g in groups) else None
                                      for i in range(len(READ_SERIES))]))
    values = [v for _, vs in groups for v in vs if v]
    lo = 2 ** math.floor(math.log2(min(values + [1])))
    hi = 2 ** math.ceil(math.log2(max(values + [1])))
    width, left, right, top, plot_height, bottom = 900, 60, 20, 70, 300, 40
    height = top + plot_height + bottom
    slot = (width - left - right) / len(groups)
    bar = slot * 0.85 / len(READ_SERIES)
    sy = lambda v: top + plot_height - (math.log2(v) - math.log2(lo)) / (math.log2(hi) - math.log2(lo)) * plot_height
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">Random point reads, cache = 1/4 of the plain table, over plain under snappy (log scale; higher is better)</text>']
    lx, ly = left, 30
    for i, (_, _, label, colour) in enumerate(READ_SERIES):
        if i == 3:
            lx, ly = left, 46
        out.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{lx + 14}" y="{ly + 9}">{label}</text>')
        lx += 14 + 7 * len(label) + 18
    v = lo
    while v <= hi:
        y = sy(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="{"#999" if v == 1 else "#eee"}"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v:g}x</text>')
        v *= 2
    base = sy(max(lo, min(1, hi)))
    for i, (name, vs) in enumerate(groups):
        x0 = left + i * slot + slot * 0.075
        if name == "geometric mean":
            out.append(f'<rect x="{left + i * slot + 2:.1f}" y="{top}" width="{slot - 4:.1f}" height="{plot_height}" fill="#f4f4f4"/>')
        for j, v in enumerate(vs):
            if v is None:
                continue
            x, y = x0 + j * bar, sy(v)
            out.append(f'<rect x="{x:.1f}" y="{min(y, base):.1f}" width="{bar - 1:.1f}" height="{max(abs(base - y), 1):.1f}" fill="{READ_SERIES[j][3]}"/>')
            out.append(f'<text x="{x + bar / 2:.1f}" y="{min(y, base) - 3:.1f}" text-anchor="middle" font-size="8">{v:.1f}</text>')
        out.append(f'<text x="{left + i * slot + slot / 2:.1f}" y="{top + plot_height + 16}" text-anchor="middle">{name}</text>')
    out.append(f'<line x1="{left}" y1="{top + plot_height}" x2="{width - right}" y2="{top + plot_height}" stroke="#333"/>')
    out.append("</svg>")
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: chart.py REPORT.json CHART.svg [READS.svg]")
    main(sys.argv[1], sys.argv[2])
    if len(sys.argv) == 4:
        reads_chart(sys.argv[1], sys.argv[3])
