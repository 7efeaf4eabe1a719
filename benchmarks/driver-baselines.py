#!/usr/bin/env python3
"""Summarizes MongoDriverBenchmarks GitHub-Markdown reports (the `Wire` rows) as one table per corpus: per case
(plain or ours, under no wire compression, snappy or zstd), µs and allocated bytes a document and wire bytes a document,
for inserts and finds, and each case's time over plain + zstd's (the driver's compressors=zstd) under the same link. Standard library only.

    python3 benchmarks/driver-baselines.py LABEL=REPORT.md [LABEL=REPORT.md...]

e.g. unshaped=.../MongoDriverBenchmarks-report-github.md 1gbit=.../MongoDriverBenchmarks-report-github.md
"""
import sys

CASES = [("Plain", "None", "plain"), ("Plain", "Snappy", "plain + snappy"), ("Plain", "Zstd", "plain + zstd"),
         ("Compressed", "None", "ours"), ("Compressed", "Snappy", "ours + snappy"), ("Compressed", "Zstd", "ours + zstd")]


def rows(path):
    table, header = {}, None
    for line in open(path, encoding="utf-8"):
        if not line.startswith("|"):
            continue
        cells = [c.strip().strip("*").strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= {"-", ":"}:
            continue
        r = dict(zip(header, cells))
        table[(r["Corpus"], r["Mode"], r["Wire"], r["Method"])] = r
    return table


def number(text):
    return float(text.replace(",", "")) if text not in ("-", "") else None


def main(argv):
    runs = []
    for arg in argv:
        label, _, path = arg.partition("=")
        runs.append((label, rows(path)))
    if not runs:
        sys.exit(__doc__)
    corpora = sorted({k[0] for _, t in runs for k in t})
    for corpus in corpora:
        print(f"**{corpus}**: µs a document (in brackets: over plain + zstd's time under the same link, the baseline a user would pick), "
              "allocated B a document, wire B a document (each process trains its own dictionary and model, so ours' bytes "
              "differ a little between runs).\n")
        head = "| case | " + " | ".join(f"insert µs, {l} | find µs, {l}" for l, _ in runs) + " | " \
            + " | ".join(f"alloc B insert / find, {l} | wire B insert / find, {l}" for l, _ in runs) + " |"
        print(head)
        print("|---|" + "---:|" * (4 * len(runs)))
        for mode, wire, title in CASES:
            cells = []
            for _, t in runs:
                for method in ("Write", "Read"):
                    r = t.get((corpus, mode, wire, method))
                    if r is None:
                        cells.append("-")
                        continue
                    us = number(r["µs/doc"])
                    text = f"{us:.2f}"
                    if (mode, wire) != ("Plain", "Zstd"):
                        p = t.get((corpus, "Plain", "Zstd", method))
                        if p is not None:
                            text += f" ({us / number(p['µs/doc']):.2f}x)"
                    cells.append(text)
            for _, t in runs:
                for column in ("Alloc B/doc", "Wire B/doc"):
                    pair = [t.get((corpus, mode, wire, method)) for method in ("Write", "Read")]
                    cells.append(" / ".join(r[column] if r else "-" for r in pair))
            print(f"| {title} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
